import http from 'node:http';

/**
 * A browser that sends a request to `url` (the loopback callback) and goes
 * away as soon as `gone()` holds (checked every millisecond), without waiting
 * for the page; resolves once it has left or read the whole page.
 */
export function browserThatLeaves(url: string, gone: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      res.on('end', () => finish());
    });
    req.on('error', () => finish());
    const poll = setInterval(() => {
      if (!gone()) return;
      req.destroy();
      finish();
    }, 1);
    function finish() {
      clearInterval(poll);
      resolve();
    }
  });
}
