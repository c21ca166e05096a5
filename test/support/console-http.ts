/** The console as a client that is not a browser meets it: its login, its form token, a POST of a form. */
import { CONSOLE_PASSWORD, type ConsoleDeployment } from './console-deployment.js';

/** The Authorization header of HTTP Basic for `user` and `password`. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The headers of the console's operator, logged in. */
export const CONSOLE_LOGIN = { authorization: basicAuth('hiresync', CONSOLE_PASSWORD) };

/** The form token of a page of the console. */
export function formToken(page: string): string {
  const token = /name="token" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error('no form on the page');
  return token;
}

/** POSTs `form` to the console, logged in, with `headers` added; its status and page. */
export async function postToConsole(
  deployment: ConsoleDeployment,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; page: string }> {
  const response = await fetch(`${deployment.url}/`, {
    method: 'POST',
    headers: {
      ...CONSOLE_LOGIN,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, page: await response.text() };
}
