--[[
  Pauses every worker sharing the credentials after a 429, and learns the
  window's length from its Retry-After.

  The 429 ends the current window at now + Retry-After; that window began
  when the allowance last came back (riseAt), provided it came back after
  the previous 429 (else riseAt belongs to an earlier window). The length
  learned is kept in the state (windowMs, windowBy = `429`) for every worker.
  Answers to requests sent before this 429 are ignored from now on
  (pausedAt; see pace-observe-3.lua).

  Input:
    KEYS[1] the pacing state hash (fields: see pace-observe-3.lua)
    KEYS[2] the probe flag (cleared: the probe has its answer)
    KEYS[3] the requests in flight (pace-acquire-3.lua): the refused one is removed
    ARGV[1] the pause in milliseconds (the wait chosen for this 429, >= 1)
    ARGV[2] the Retry-After the 429 stated, in milliseconds, or -1 when none was readable
    ARGV[3] the first guess of the window length (ms); the learned one, when there is one, counts instead
    ARGV[4] the longest window that may be learned (HIRESYNC_MAX_RETRY_AFTER, ms)
    ARGV[5] the refused request's number (pace-acquire-3.lua), or 0 when it has none

  A length is learned only from continuous traffic: the lowest allowance was
  recorded within one window of this 429. After an idle spell (another client
  of the same credentials spent the allowance), riseAt is long past and the
  gap it spans is idleness, not a window.

  Output:
    the window length learned, in milliseconds, or 0 when this 429 taught none
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local pauseMs = tonumber(ARGV[1])
local retryAfter = tonumber(ARGV[2])
local span = tonumber(ARGV[3])
local longest = tonumber(ARGV[4])
local DAY = 86400000
local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end

redis.call('DEL', KEYS[2])
if tonumber(ARGV[5]) > 0 then redis.call('ZREM', KEYS[3], ARGV[5]) end
local previousPause = num('pausedAt')
local pauseEnd = now + pauseMs
if pauseEnd > num('pausedUntil') then redis.call('HSET', key, 'pausedUntil', pauseEnd) end
redis.call('HSET', key, 'pausedAt', now)
redis.call('HDEL', key, 'remaining', 'sure', 'probeAt')
local learned = 0
local riseAt = num('riseAt')
local lastAt = num('lastAt')
if num('windowMs') > 0 then span = num('windowMs') end
if retryAfter >= 0 and riseAt > 0 and riseAt >= previousPause
    and lastAt > 0 and now - lastAt <= span then
  local length = now + retryAfter - riseAt
  if length >= 100 and length <= DAY and length <= longest then
    redis.call('HSET', key, 'windowMs', length, 'windowBy', '429')
    learned = length
  end
end
redis.call('PEXPIRE', key, DAY + math.max(0, num('pausedUntil') - now))
return learned
