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

  While an epoch X-RateLimit-Reset is read through a clock offset whose
  bounds are still far apart, and the window has time to spare, a request is
  held until a point inside the interval where the API's next second edge
  may fall, so that successive Date headers tick over between two answers
  close together and the bounds narrow (src/api/second-edge.ts,
  edgeProbeHoldMs: the same rule as a pure function).

  Every request let go (but under an API that sends no
  X-RateLimit-Remaining) is recorded as in flight until its answer, under a
  number of its own (the state's `seq`): an allowance taken from an answer
  is only what the API had left when that request reached it, and requests
  still on their way may be counted after it (pace-observe-3.lua).

  Input:
    KEYS[1] the pacing state hash (see pace-observe-3.lua for its fields;
            probeAt, when the spent window's probe goes, and seq, the number
            of the last request let go, are this script's)
    KEYS[2] the probe flag
    KEYS[3] the requests in flight: a sorted set of their numbers, scored by
            the time by which each has its answer or has failed (its HTTP
            timeout after it was let go)
    ARGV[1] requests of each window to leave unused (the reserve)
    ARGV[2] 1 when this is a request's first ask (its caller's work since the
            last answer is measured then), else 0
    ARGV[3] the longest a request let go now may wait for its answer, in
            milliseconds (HIRESYNC_HTTP_TIMEOUT and a second)

  Output:
    { wait, now, held, id }: wait = 0 - the request may go now (now is its
    send time and id its number, 0 when it is not tracked, both to be given
    back to pace-observe-3.lua with its answer, or the number to
    pace-pause-3.lua with a 429); wait = n > 0 - milliseconds to wait before
    asking again; held = 1 when the wait is a hold for the second edge (never
    longer than a second), else 0
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reserve = tonumber(ARGV[1])
local key = KEYS[1]
local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
if ARGV[2] == '1' then
  -- The caller's own work between an answer and its next request (pace-observe-3.lua sets answeredAt).
  local answeredAt = num('answeredAt')
  local work = now - answeredAt
  if answeredAt > 0 and work >= 0 and work < 1000 then
    local known = redis.call('HGET', key, 'workMs')
    local ewma = known and (tonumber(known) + (work - tonumber(known)) / 4) or work
    redis.call('HSET', key, 'workMs', math.floor(ewma + 0.5))
  end
end

-- src/api/second-edge.ts, edgeProbeHoldMs: how long to hold a request of a
-- live window (resetAt) with `left` requests to go, 0 to send it now.
local DRIFT_PER_MS = 0.0001
local function edgeProbeHold(resetAt, left)
  if not redis.call('HGET', key, 'epochReset') then return 0 end
  local knownLo = redis.call('HGET', key, 'offsetLo')
  if not knownLo then return 0 end
  local lo = tonumber(knownLo) - math.floor(math.max(0, now - num('offsetLoAt')) * DRIFT_PER_MS)
  local hi = num('offsetHi') + math.floor(math.max(0, now - num('offsetHiAt')) * DRIFT_PER_MS)
  local gap = hi - lo
  local rtt = num('rttMs')
  local step = rtt + num('workMs')
  if gap <= math.max(20, 2 * step) then return 0 end
  local edgeTo = (math.floor((now + lo) / 1000) + 1) * 1000 - lo
  local spacing = math.min(gap, 1000) / (left + 1)
  local hold = math.ceil(edgeTo - gap + spacing - rtt / 2 - now)
  if hold <= 0 or hold > gap / 2 then return 0 end
  if now + hold + 2 * left * step + 50 <= resetAt - gap then return hold end
  return 0
end

-- The request goes now: numbered and recorded as in flight until its answer,
-- its release (it never left its host: RateLimitPacer.release) or the end of
-- its HTTP timeout (pace-observe-3.lua drops those past it).
local inFlightMs = tonumber(ARGV[3])
local function go()
  local id = redis.call('HINCRBY', key, 'seq', 1)
  -- A state no answer has touched yet (pace-observe-3.lua keeps it a day past its last) still goes away.
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, 86400000) end
  redis.call('ZADD', KEYS[3], now + inFlightMs, id)
  if redis.call('PTTL', KEYS[3]) < inFlightMs then redis.call('PEXPIRE', KEYS[3], inFlightMs) end
  return { 0, now, 0, id }
end

local paused = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
if paused > now then return { paused - now, now, 0, 0 } end
local rem = redis.call('HGET', KEYS[1], 'remaining')
if rem then
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if now < resetAt then
    if tonumber(rem) > reserve then
      if redis.call('HGET', KEYS[1], 'sure') then
        local hold = edgeProbeHold(resetAt, tonumber(rem) - reserve)
        if hold > 0 then return { hold, now, 1, 0 } end
      end
      redis.call('HINCRBY', KEYS[1], 'remaining', -1)
      return go()
    end
    if redis.call('HGET', KEYS[1], 'sure') then return { resetAt - now, now, 0, 0 } end
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
    if probeAt > now then return { probeAt - now, now, 0, 0 } end
  else
    redis.call('HDEL', KEYS[1], 'remaining', 'sure')
  end
end
if redis.call('HGET', KEYS[1], 'headerless') then return { 0, now, 0, 0 } end
if redis.call('SET', KEYS[2], '1', 'PX', 2000, 'NX') then return go() end
return { 10, now, 0, 0 }
