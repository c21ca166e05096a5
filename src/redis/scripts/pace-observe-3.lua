--[[
  Records what a response (any status but 429) said about the shared rate limit.

  The state hash holds:
    remaining, resetAt  the allowance left in the current window and its end
    sure                set when resetAt is known (X-RateLimit-Reset, or a
                        learned window length), unset while it is a guess
    headerless          the API sent no X-RateLimit-Remaining: no pacing
    limit               the last X-RateLimit-Limit
    last, lastAt, lastSeq
                        the lowest allowance reported since the window began,
                        when it was recorded, and the number of the last
                        request let go then (seq)
    riseAt, riseSure    when the window began, i.e. the allowance came back
                        (riseSure unset: only the first answer seen)
    windowMs, windowBy  the learned window length, and what taught it
                        (`429`: a Retry-After; `rise`: the time between two rises)
    pausedUntil, pausedAt  the pause after a 429 (pace-pause-3.lua)
    probeAt             when the probe of a spent, guessed window goes (pace-acquire-3.lua)
    offsetLo, offsetLoAt, offsetHi, offsetHiAt
                        the bounds of the offset between the API's clock and
                        Redis time (API − Redis, ms) learned from Date headers,
                        and when each was learned (src/api/clock-offset.ts)
    epochReset          set while answers state X-RateLimit-Reset in epoch
                        seconds (the second edge is then worth learning:
                        src/api/second-edge.ts)
    rttMs, answeredAt   a request's round trip (moving average) and when the
                        last answer was recorded; workMs, the caller's own work
                        between an answer and its next request, is
                        pace-acquire-3.lua's
    seq                 the number of the last request let go (pace-acquire-3.lua)
    baseSeq, baseReported
                        seq when `remaining` was last taken from an answer, and
                        the allowance that answer reported

  A rise (a new window) is an answer reporting more allowance than `last`
  to a request sent after `last` was recorded: an allowance only shrinks
  within a window, so an older answer arriving late (concurrent workers) is
  never mistaken for one. Answers to requests sent before the last 429 belong
  to the window that 429 ended and are ignored. X-RateLimit-Reset, when sent,
  states the end outright; an end already past is a finished window's. An
  epoch Reset is on the API's clock: it is converted to Redis time with the
  offset estimated over every response's Date (the tightest bounds seen, as
  src/api/clock-offset.ts describes), taking the lower bound so that the end
  is never waited for early. The time comes from Redis.

  An allowance taken from an answer (a rise, a later window stated, or a new
  one after our end) is what the API had left when that request reached it.
  Requests still in flight then (KEYS[3]: let go by pace-acquire-3.lua and
  not answered yet) may reach the API after it and be counted against that
  same allowance: a request let go just before the end of a window, as we
  read it, may arrive after the API opened the next one, later than a
  request sent after it. Each is taken off the allowance (`remaining` = the
  reported allowance − the requests in flight), and given back when its own
  answer shows it was not counted after the one the allowance came from: it
  reports more allowance left than that one (it was counted before it), or
  states an end half a window or more before the current one (it was
  counted in an earlier window; such an answer, of a request in flight
  while our window is live, changes nothing else either). The answer of a
  request taken off the allowance lowers neither it nor the window's low:
  without a Reset it may be the window before's (a late answer), and
  otherwise the allowance has it already. An allowance
  taken from an answer also makes its report the window's low, so that a
  request counted ahead of it but answered after it is no rise. A request
  that never left its host (its connection refused) is taken out of the set
  by RateLimitPacer.release; one that failed after it may have reached the
  API (a reset, a timeout), or whose process vanished, is dropped once its
  HTTP timeout has passed.

  Not covered: without X-RateLimit-Reset, a request of the next window
  counted just behind the one whose answer shows the rise, but answered
  before it, is no longer in flight when the rise is read, and the rise's
  allowance is then one too high (a 429 is paused for and retried as any).

  Input:
    KEYS[1] the pacing state hash
    KEYS[2] the probe flag (cleared: the probe has its answer)
    KEYS[3] the requests in flight (pace-acquire-3.lua): this one's number is removed
    ARGV[1] X-RateLimit-Remaining (0..10^9), or -1 when the header was absent
    ARGV[2] X-RateLimit-Limit (1..10^9), or -1
    ARGV[3] X-RateLimit-Reset as milliseconds until the end, or -1
    ARGV[4] X-RateLimit-Reset as the end in Unix epoch milliseconds, or -1
    ARGV[5] the first guess of the window length in milliseconds (HIRESYNC_RATE_LIMIT_WINDOW)
    ARGV[6] when the request was sent (the time pace-acquire-3.lua gave it)
    ARGV[7] the response's Date header in epoch milliseconds, or -1
    ARGV[8] the request's number (pace-acquire-3.lua), or 0 when it has none

  Output:
    0
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local reported = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local resetIn = tonumber(ARGV[3])
local resetEpoch = tonumber(ARGV[4])
local guess = tonumber(ARGV[5])
local sentAt = tonumber(ARGV[6])
local dateMs = tonumber(ARGV[7])
local id = tonumber(ARGV[8])
local DAY = 86400000
local DRIFT_PER_MS = 0.0001
local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
local function done()
  redis.call('PEXPIRE', key, DAY + math.max(0, num('pausedUntil') - now))
  return 0
end

redis.call('DEL', KEYS[2])

-- This request is answered. It was in flight when `remaining` was last taken
-- from an answer (charged: taken off it) if it was let go before that and is
-- still in the set.
local charged = false
if id > 0 then
  charged = redis.call('ZREM', KEYS[3], id) == 1 and id <= num('baseSeq')
end
-- Past its HTTP timeout (pace-acquire-3.lua scores each by it): no answer is coming.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
-- Sets the allowance from this answer's report, less the requests still in
-- flight, and makes the report the window's low: a request let go before
-- now, counted ahead of this one but answered after it, is then no rise
-- (its answer reports more: it is given back, as counted in the report).
local function allow(left)
  local inFlight = redis.call('ZCARD', KEYS[3])
  redis.call('HSET', key, 'remaining', math.max(0, left - inFlight),
    'baseSeq', num('seq'), 'baseReported', left,
    'last', left, 'lastAt', now, 'lastSeq', num('seq'))
end

local rtt = now - sentAt
if sentAt > 0 and rtt >= 0 and rtt < 60000 then
  local known = redis.call('HGET', key, 'rttMs')
  local ewma = known and (tonumber(known) + (rtt - tonumber(known)) / 4) or rtt
  redis.call('HSET', key, 'rttMs', math.floor(ewma + 0.5), 'answeredAt', now)
end
if resetEpoch >= 0 and dateMs >= 0 then
  redis.call('HSET', key, 'epochReset', '1')
elseif resetIn >= 0 then
  redis.call('HDEL', key, 'epochReset')
end

-- The clock offset (src/api/clock-offset.ts, nextClockOffset): this answer
-- came between sentAt and now, in the API's second dateMs.
local offsetLo = nil
if dateMs >= 0 then
  local ownLo = dateMs - now
  local ownHi = dateMs + 1000 - sentAt
  local knownLo = redis.call('HGET', key, 'offsetLo')
  if knownLo then
    local lo = tonumber(knownLo) - math.floor(math.max(0, now - num('offsetLoAt')) * DRIFT_PER_MS)
    local hi = num('offsetHi') + math.floor(math.max(0, now - num('offsetHiAt')) * DRIFT_PER_MS)
    -- Contradicting bounds prove the stored ones wrong (a clock was set, by any amount).
    if ownLo > hi or ownHi < lo then
      redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now, 'offsetHi', ownHi, 'offsetHiAt', now)
      offsetLo = ownLo
    else
      if ownLo > lo then
        redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now)
        lo = ownLo
      end
      if ownHi < hi then redis.call('HSET', key, 'offsetHi', ownHi, 'offsetHiAt', now) end
      offsetLo = lo
    end
  else
    redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now, 'offsetHi', ownHi, 'offsetHiAt', now)
    offsetLo = ownLo
  end
else
  -- No Date: the lower bound already learned, widened for its age (none: the clocks agree).
  local knownLo = redis.call('HGET', key, 'offsetLo')
  if knownLo then
    offsetLo = tonumber(knownLo) - math.floor(math.max(0, now - num('offsetLoAt')) * DRIFT_PER_MS)
  end
end
if reported < 0 then
  redis.call('HSET', key, 'headerless', '1')
  return done()
end
redis.call('HDEL', key, 'headerless')
if sentAt < num('pausedAt') then return done() end
if limit > 0 then
  redis.call('HSET', key, 'limit', limit)
  if reported > limit then reported = limit end
end

local stated = nil
if resetEpoch >= 0 then
  -- On the API's clock: converted with the estimated offset (localInstantOf; none known: the clocks agree).
  stated = resetEpoch - (offsetLo or 0)
elseif resetIn >= 0 then
  stated = now + resetIn
end
if stated and stated - now > DAY then stated = nil end
-- The end this answer states, even if past (which window counted it).
local statedEnd = stated
-- An end already past (an API clock behind ours, or a finished window's
-- answer): the end is unknown, but the allowance reported still counts.
if stated and stated <= now then stated = nil end

local rem = redis.call('HGET', key, 'remaining')
local resetAt = num('resetAt')
local live = rem and now < resetAt
local last = redis.call('HGET', key, 'last')
local windowMs = num('windowMs')
local span = windowMs > 0 and windowMs or guess
-- Waiting a learned end: a little late rather than early (the window is measured, not stated).
local margin = math.min(250, math.ceil(windowMs / 100))

local first = not last
-- Sent after `last` was recorded: numbered after it (a bare send time: not before it).
local sentAfter = sentAt >= num('lastAt')
if id > 0 and redis.call('HGET', key, 'lastSeq') then sentAfter = id > num('lastSeq') end
local rise = (not first) and reported > tonumber(last) and sentAfter
if first or rise then
  if rise and reported >= 2 * tonumber(last) + 1 then
    -- The allowance came back after running low: two such rises span a window
    -- (a 429's Retry-After, a direct measurement, takes precedence).
    local previous = num('riseAt')
    -- Only from continuous traffic: the low was seen within one window of
    -- this rise (after an idle spell the interval is idleness). A rise can
    -- only shorten a learned window: rises are seen at or after the reset.
    if redis.call('HGET', key, 'riseSure') and previous > 0 and now - num('lastAt') <= span then
      local interval = now - previous
      if interval >= 100 and interval <= DAY and (windowMs == 0 or interval < windowMs) then
        windowMs = interval
        redis.call('HSET', key, 'windowMs', windowMs, 'windowBy', 'rise')
      end
    end
  end
  redis.call('HSET', key, 'riseAt', now)
  allow(reported)
  redis.call('HDEL', key, 'probeAt')
  if rise then redis.call('HSET', key, 'riseSure', '1') else redis.call('HDEL', key, 'riseSure') end
  if stated then
    redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
  elseif windowMs > 0 then
    redis.call('HSET', key, 'resetAt', now + windowMs + margin, 'sure', '1')
  else
    redis.call('HSET', key, 'resetAt', now + guess)
    redis.call('HDEL', key, 'sure')
  end
  return done()
end

if live and charged then
  if statedEnd and statedEnd <= resetAt - span / 2 then
    -- Counted in an earlier window: not against this allowance, and nothing about it.
    redis.call('HINCRBY', key, 'remaining', 1)
    return done()
  end
  -- Counted before the answer the allowance came from: already in it.
  if reported > num('baseReported') then redis.call('HINCRBY', key, 'remaining', 1) end
end
-- A request in flight when the allowance was read was taken off it then: its
-- report lowers nothing. Counted after that answer, it is in the allowance
-- already; counted in the window before (no Reset tells), its report would
-- cut this window's allowance to what that one had left.
local lowers = not (live and charged)
if lowers and reported < tonumber(last) then
  redis.call('HSET', key, 'last', reported, 'lastAt', now, 'lastSeq', num('seq'))
end
if live then
  if lowers and reported < tonumber(rem) then redis.call('HSET', key, 'remaining', reported) end
  if stated and stated > resetAt + 1000 then
    -- The API says a later window: the one we held is over.
    redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
    allow(reported)
  elseif stated and (stated < resetAt or not redis.call('HGET', key, 'sure')) then
    -- Every answer states the end plus its own delay on the way here: the earliest is the truest.
    redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
  end
  return done()
end

-- Our end of the window has passed (or a 429 closed it) but the allowance did
-- not come back: the window's start is the last rise if that is recent, else unknown.
allow(reported)
redis.call('HDEL', key, 'probeAt')
local riseAt = num('riseAt')
if riseAt < num('pausedAt') or now - riseAt >= 2 * span then
  redis.call('HSET', key, 'riseAt', now)
  redis.call('HDEL', key, 'riseSure')
end
if stated then
  redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
else
  redis.call('HSET', key, 'resetAt', now + span)
  redis.call('HDEL', key, 'sure')
end
return done()
