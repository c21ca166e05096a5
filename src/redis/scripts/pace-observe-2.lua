--[[
  Records what a response said about the shared rate limit.

  Input:
    KEYS[1] the pacing state hash
    KEYS[2] the probe flag (cleared: the probe has its answer)
    ARGV[1] X-RateLimit-Remaining, or -1 when the header was absent
    ARGV[2] the window length in milliseconds
    ARGV[3] a pause in milliseconds every worker keeps (a 429's Retry-After), else 0

  Output:
    0
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reported = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local pauseMs = tonumber(ARGV[3])
redis.call('DEL', KEYS[2])
if reported < 0 and pauseMs == 0 then
  redis.call('HSET', KEYS[1], 'headerless', '1')
elseif reported >= 0 then
  redis.call('HDEL', KEYS[1], 'headerless')
end
if pauseMs > 0 then
  local pauseEnd = now + pauseMs
  if pauseEnd > tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0') then
    redis.call('HSET', KEYS[1], 'pausedUntil', pauseEnd)
  end
  redis.call('HDEL', KEYS[1], 'remaining')
elseif reported >= 0 then
  local rem = redis.call('HGET', KEYS[1], 'remaining')
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if (not rem) or now >= resetAt then
    redis.call('HSET', KEYS[1], 'remaining', reported, 'resetAt', now + windowMs)
  elseif reported < tonumber(rem) then
    redis.call('HSET', KEYS[1], 'remaining', reported)
  end
end
redis.call('PEXPIRE', KEYS[1], math.max(windowMs, pauseMs) * 2 + 60000)
return 0
