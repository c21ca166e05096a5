/** What the simulator gives a resource's record generator to build its records from. */
export interface SimulationContext {
  /** Seed of every generated value. */
  readonly seed: number;
  /** A stable 32-bit mix of two numbers: the source of every generated value. */
  mix(a: number, b: number): number;
  /** Send tracking links flat (`job_board_id`, `source_id`, `referrer_id`). */
  readonly flat: boolean;
  /** The id of the record at `index` of a resource (ids of other resources included). */
  idOf(resource: string, index: number): number;
  /** Records of a resource (index slots, removed ones included). */
  size(resource: string): number;
  /**
   * Records of a resource when its dataset was made. Indexes from here on
   * were added later (grow): records created after the start, which may
   * carry keys the older ones lack.
   */
  startSize(resource: string): number;
  /** Creation and update times of the record at `index`, and how often it changed. */
  times(
    resource: string,
    index: number,
  ): { version: number; created_at: string; updated_at: string };
}

/** Builds the record at `index` of one resource, as the simulated API serves it. */
export type RecordGenerator = (sim: SimulationContext, index: number) => Record<string, unknown>;
