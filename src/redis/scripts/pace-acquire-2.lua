--[[
  Reserves one request of the shared rate-limit allowance.

  A known allowance is decremented per reservation, so concurrent workers
  cannot overdraw the window between two responses. When it is spent, the
  request waits for the window's end if that end is sure (stated by
  X-RateLimit-Reset, or a learned window length counted from the moment the
  allowance came back); while the end is only the first guess
  (HIRESYNC_RATE_LIMIT_WINDOW) it goes as a probe instead, one at a time, so
  that the API's answer (the allowance back, or a 429 whose Retry-After gives
  the real end) teaches the window rather than the guess being sat out. While
  the allowance is unknown (a new window, or after a 429) one request at a
  time goes as a probe too, since requests sent blind would not be counted;
  an API that sends no X-RateLimit-Remaining at all is not probed. The time
  comes from Redis, so processes on hosts with skewed clocks agree.

  Input:
    KEYS[1] the pacing state hash (see pace-observe-2.lua for its fields;
            probeAt, when the spent window's probe goes, is this script's)
    KEYS[2] the probe flag
    ARGV[1] requests of each window to leave unused (the reserve)

  Output:
    { wait, now }: wait = 0 - the request may go now (now is its send time,
    to be given back to pace-observe-2.lua with its answer); wait = n > 0 -
    milliseconds to wait before asking again
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reserve = tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
if paused > now then return { paused - now, now } end
local rem = redis.call('HGET', KEYS[1], 'remaining')
if rem then
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if now < resetAt then
    if tonumber(rem) > reserve then
      redis.call('HINCRBY', KEYS[1], 'remaining', -1)
      return { 0, now }
    end
    if redis.call('HGET', KEYS[1], 'sure') then return { resetAt - now, now } end
    -- Spent, and the end is only guessed: probe (below) instead of sitting the
    -- guess out, at the next whole second after the window began. Retry-After
    -- counts whole seconds, so a 429 then states the end to within a few
    -- milliseconds for a window of whole seconds, where one sent at once
    -- would be up to a second late; a window already over costs under a second, once.
    local riseAt = tonumber(redis.call('HGET', KEYS[1], 'riseAt') or '0')
    local probeAt = tonumber(redis.call('HGET', KEYS[1], 'probeAt') or '0')
    if probeAt == 0 and riseAt > 0 then
      probeAt = riseAt + 1000 * math.max(1, math.ceil((now - riseAt) / 1000))
      redis.call('HSET', KEYS[1], 'probeAt', probeAt)
    end
    if probeAt > now then return { probeAt - now, now } end
  else
    redis.call('HDEL', KEYS[1], 'remaining', 'sure')
  end
end
if redis.call('HGET', KEYS[1], 'headerless') then return { 0, now } end
if redis.call('SET', KEYS[2], '1', 'PX', 2000, 'NX') then return { 0, now } end
return { 10, now }
