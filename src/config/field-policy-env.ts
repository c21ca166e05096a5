/**
 * `HIRESYNC_FIELD_POLICY` and `HIRESYNC_HASH_KEY`: read together, since a
 * policy that hashes needs the key. The resources' own checks (a key typed
 * by its schema cannot be hashed; reference columns mirrored) are
 * resources/policy-targets.ts's, applied by loadConfig.
 */
import type { ConfigProblem } from '../errors.js';
import { FieldHasher } from '../privacy/field-hasher.js';
import { type FieldPolicy, parseFieldPolicy } from '../privacy/field-policy.js';
import { RecordPolicy } from '../privacy/police-page.js';
import { registerSecret } from '../secret.js';
import type { ResourceName } from '../sync/ports.js';
import { resourceNameProblem } from './resource-names.js';
import { parseSecretKeys } from './secret-keys.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The policy and hasher of the environment; problems name the variable and never quote the key. */
export function readFieldPolicy(env: Env): {
  policy: FieldPolicy | undefined;
  hasher: FieldHasher | undefined;
  problems: ConfigProblem[];
} {
  const problems: ConfigProblem[] = [];
  const text = env.HIRESYNC_FIELD_POLICY?.trim() ?? '';
  let policy: FieldPolicy | undefined;
  if (text !== '') {
    const parsed = parseFieldPolicy(text);
    if ('problem' in parsed) {
      problems.push({ variable: 'HIRESYNC_FIELD_POLICY', message: parsed.problem });
    } else {
      policy = parsed.policy;
    }
  }
  const keyText = env.HIRESYNC_HASH_KEY?.trim() ?? '';
  let hasher: FieldHasher | undefined;
  if (keyText !== '') {
    const parsed = keyText.includes(',') ? undefined : parseSecretKeys(keyText);
    if (parsed === undefined || 'problem' in parsed) {
      problems.push({
        variable: 'HIRESYNC_HASH_KEY',
        message:
          'must be one key of 32 bytes in base64 or hex (make one with: openssl rand -base64 32); keep it: another key changes every hash',
      });
    } else {
      registerSecret(keyText, { pinned: true });
      hasher = new FieldHasher(parsed.keys[0] as Buffer);
    }
  }
  if (policy?.hashes && hasher === undefined && keyText === '') {
    problems.push({
      variable: 'HIRESYNC_HASH_KEY',
      message:
        'is required: HIRESYNC_FIELD_POLICY hashes values (make one with: openssl rand -base64 32, and keep it: another key changes every hash)',
    });
  }
  return { policy, hasher, problems };
}

/**
 * `HIRESYNC_FIELD_POLICY` and `HIRESYNC_HASH_KEY`, as written: the resources'
 * checks and mirrors are applied by whoever holds the catalog (createApp,
 * reapply-policy: privacy/policy-targets.ts resolvePolicy). Given `known`
 * (the declared resource names), an item whose resource is neither one of
 * them nor a name a list resource could take (`Candidates`, `candidates_data`)
 * is a problem: it would protect nothing, silently.
 */
export function recordPolicyOf(
  env: Env,
  known?: readonly ResourceName[],
): {
  fieldPolicy: RecordPolicy | undefined;
  problems: ConfigProblem[];
} {
  const { policy, hasher, problems } = readFieldPolicy(env);
  if (policy && known) {
    for (const name of policy.resources) {
      const problem = known.includes(name) ? undefined : resourceNameProblem(name);
      if (problem) {
        problems.push({
          variable: 'HIRESYNC_FIELD_POLICY',
          message: `names the resource ${JSON.stringify(name)}, which no resource can be (${problem}): its items would apply to nothing`,
        });
      }
    }
  }
  if (!policy || problems.length > 0) return { fieldPolicy: undefined, problems };
  return { fieldPolicy: new RecordPolicy(policy, hasher), problems: [] };
}
