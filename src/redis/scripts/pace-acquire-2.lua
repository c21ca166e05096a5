--[[
  Reserves one request of the shared rate-limit allowance.

  A known allowance is decremented per reservation, so concurrent workers
  cannot overdraw the window between two responses. While the allowance is
  unknown (a new window, or after a 429) one request at a time goes as a
  probe, since requests sent blind would not be counted; an API that sends no
  X-RateLimit-Remaining at all is not probed. The time comes from Redis, so
  processes on hosts with skewed clocks agree on when a pause ends.

  Input:
    KEYS[1] the pacing state hash (remaining, resetAt, pausedUntil, headerless)
    KEYS[2] the probe flag
    ARGV[1] requests of each window to leave unused (the reserve)

  Output:
    0 - the request may go now
    n - milliseconds to wait before asking again
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reserve = tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
if paused > now then return paused - now end
local rem = redis.call('HGET', KEYS[1], 'remaining')
if rem then
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if now < resetAt then
    if tonumber(rem) <= reserve then return resetAt - now end
    redis.call('HINCRBY', KEYS[1], 'remaining', -1)
    return 0
  end
  redis.call('HDEL', KEYS[1], 'remaining')
end
if redis.call('HGET', KEYS[1], 'headerless') then return 0 end
if redis.call('SET', KEYS[2], '1', 'PX', 2000, 'NX') then return 0 end
return 10
