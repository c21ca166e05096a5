--[[
  Pauses every worker sharing the credentials after a 429, and learns the
  window's length from its Retry-After.

  The 429 ends the current window at now + Retry-After; that window began
  when the allowance last came back (riseAt), provided it came back after
  the previous 429 (else riseAt belongs to an earlier window). The length
  learned is kept in the state (windowMs, windowBy = `429`) for every worker.
  Answers to requests sent before this 429 are ignored from now on
  (pausedAt; see pace-observe-2.lua).

  Input:
    KEYS[1] the pacing state hash (fields: see pace-observe-2.lua)
    KEYS[2] the probe flag (cleared: the probe has its answer)
    ARGV[1] the pause in milliseconds (the wait chosen for this 429, >= 1)
    ARGV[2] the Retry-After the 429 stated, in milliseconds, or -1 when none was readable

  Output:
    the window length learned, in milliseconds, or 0 when this 429 taught none
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local pauseMs = tonumber(ARGV[1])
local retryAfter = tonumber(ARGV[2])
local DAY = 86400000
local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end

redis.call('DEL', KEYS[2])
local previousPause = num('pausedAt')
local pauseEnd = now + pauseMs
if pauseEnd > num('pausedUntil') then redis.call('HSET', key, 'pausedUntil', pauseEnd) end
redis.call('HSET', key, 'pausedAt', now)
redis.call('HDEL', key, 'remaining', 'sure', 'probeAt')
local learned = 0
local riseAt = num('riseAt')
if retryAfter >= 0 and riseAt > 0 and riseAt >= previousPause then
  local length = now + retryAfter - riseAt
  if length >= 100 and length <= DAY then
    redis.call('HSET', key, 'windowMs', length, 'windowBy', '429')
    learned = length
  end
end
redis.call('PEXPIRE', key, DAY + math.max(0, num('pausedUntil') - now))
return learned
