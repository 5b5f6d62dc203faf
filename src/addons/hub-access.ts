import { LabError } from '../errors.js';
import { isStatus } from '../kube/client.js';

/**
 * A hub API call made with the user's own identity: a 403 becomes an error that
 * says what was refused and which permission grants it.
 */
export async function asHubUser<T>(what: string, permission: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isStatus(err, 403)) {
      throw new LabError('failure', `Forbidden: your hub identity may not ${what}`, {
        hint: `it needs ${permission}; see scenarios/deployment-only-role.md for the whole minimal role`,
        cause: err,
      });
    }
    throw err;
  }
}
