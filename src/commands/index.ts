import { accounts } from './accounts/index.js';
import type { Command } from './command.js';
import { demo } from './demo.js';
import { migrate } from './migrate.js';
import { simulate } from './simulate.js';
import { status } from './status.js';
import { sync } from './sync.js';
import { worker } from './worker.js';

/** Every hiresync command, in the order `hiresync --help` lists them. */
export const COMMANDS: readonly Command[] = [
  migrate,
  sync,
  worker,
  status,
  accounts,
  simulate,
  demo,
];
