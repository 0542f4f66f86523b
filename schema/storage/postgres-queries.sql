-- Every SQL statement of the PostgreSQL backend (src/store/postgres/), by name, over the layout of
-- sqlite-layout.json in the PostgreSQL dialect (generated/postgres-layout.gen.sql). Tables are named
-- without a schema: every connection of the backend has search_path set to the target schema.
-- scripts/render-postgres.ts checks each statement without a server (one statement, named
-- parameters only, tables of the layout, result columns named as written) and renders
-- generated/postgres-queries.gen.ts; test/postgres-queries.test.ts prepares every one on a server.
-- Format: a `-- name: <camelCase>` line, optional `--` lines that document the statement, then
-- exactly one statement. Parameters are named (`@name`) and become $1, $2… in order of first use;
-- `$` is refused (no positional parameters, no dollar quoting). `{schema}` stands for the target
-- schema, substituted as a quoted identifier (identifiers cannot be bound). Result columns are
-- aliased to the camelCase member they fill, quoted so that PostgreSQL keeps the case, so src/
-- never names a column.

-- name: sessionExists
-- One row when the session is stored.
SELECT 1 AS found FROM sessions WHERE id = @sessionId;

-- name: lockSessionRow
-- One row when the session is stored, locking it against other writers of the same session until
-- the transaction ends. NO KEY UPDATE does not conflict with the KEY SHARE locks that the foreign
-- key checks of event inserts take, and sessions of other ids are never touched.
SELECT 1 AS found FROM sessions WHERE id = @sessionId FOR NO KEY UPDATE;

-- name: shareSessionRow
-- One row when the session is stored, keeping it from being deleted until the transaction ends
-- (a fork's source while its prefix is copied).
SELECT 1 AS found FROM sessions WHERE id = @sessionId FOR KEY SHARE;

-- name: sessionHeader
-- The header in SessionHeader member order; the backend drops the NULL members (absent, never null).
SELECT
  version,
  id,
  created_at AS "createdAt",
  cwd,
  parent_session AS "parentSession",
  seed_length AS "seedLength"
FROM sessions
WHERE id = @sessionId;

-- name: appendPoint
-- The seq of the last event row of a session (NULL when it has none): a probe of the primary key,
-- never a scan of the log. Run after the session row is locked (lockSessionRow, appendEvents), in a
-- statement of its own, so that under READ COMMITTED it sees every append committed before the
-- lock was granted.
SELECT max(seq)::bigint AS "lastSeq" FROM events WHERE session_id = @sessionId;

-- name: appendEvents
-- An append of one chunk of a batch (events from @fromSeq, one array per member as insertEvents
-- binds them), in one statement: it locks the session row against the other writers of the
-- session (as lockSessionRow), checks after that lock that the writer lock is still held (@pid,
-- @key as writerLockHeld; @pid NULL: the backend holds none) and that the batch starts at the
-- append point, then inserts the events, leaves them to the next search's index step when one of
-- them carries searchable text (@searchable, as markSearchPending), moves the summary (@updatedAt,
-- @derivedTitle as touchSummary), and tells the change channel (@channel) that session @sessionId changed, delivered at commit
-- only if it commits. Nothing is written unless the session row was locked, the lock is held and
-- the append point was proven (`appendable`); a data-modifying WITH query runs to its end even when
-- nothing reads it.
--
-- Why a stale snapshot cannot let a wrong batch land: under READ COMMITTED the statement's snapshot
-- is taken before the row lock wait ends, so `lastSeq` (max(seq) in that snapshot) may miss what
-- another writer of the session committed while this one waited. The proof does not rest on it.
-- Every writer of a session's events holds its row lock (appends, repairs; a delete removes the
-- row itself) and keeps the seqs a prefix 0…n-1. Once the lock is granted nothing else changes the
-- session's events until this transaction ends, and then: the row at @fromSeq - 1 exists, since
-- `previous` locked it (a row lock reads the newest version: a row deleted by a committed
-- transaction, say a repair that cut the tail, is not returned), so n >= @fromSeq; and the primary
-- key (session_id, seq) refuses the insert at @fromSeq when n > @fromSeq, whatever the snapshot
-- shows (a unique violation: SEQ_CONFLICT, and nothing of the statement stays). An insert that
-- succeeds therefore starts exactly at the stored end. A stale snapshot can only make `appendable`
-- false; the backend then reads the append point again in a statement of its own, after the lock
-- (appendPoint), and runs this statement once more when it matches. The writer lock check and the
-- lock on the events row come after the session row lock (they read the locked row), so a new
-- holder of the writer lock waits for this write (see takeWriterLock).
WITH locked AS MATERIALIZED (
  SELECT s.id FROM sessions AS s WHERE s.id = @sessionId FOR NO KEY UPDATE
),
previous AS MATERIALIZED (
  SELECT e.seq
  FROM locked
  JOIN events AS e ON e.session_id = locked.id AND e.seq = @fromSeq::bigint - 1
  FOR KEY SHARE OF e
),
point AS MATERIALIZED (
  SELECT
    (SELECT max(e.seq) FROM events AS e WHERE e.session_id = locked.id) AS last_seq,
    (
      @pid::integer IS NULL
      OR EXISTS (
        SELECT 1
        FROM pg_catalog.pg_locks AS l
        WHERE locked.id IS NOT NULL
          AND l.locktype = 'advisory'
          AND l.granted
          AND l.pid = @pid::integer
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database AS d WHERE d.datname = current_database())
          AND l.classid = ((@key::bigint >> 32) & 4294967295)::oid
          AND l.objid = (@key::bigint & 4294967295)::oid
          AND l.objsubid = 1
      )
    ) AS held,
    (@fromSeq::bigint = 0 OR EXISTS (SELECT 1 FROM previous)) AS has_previous
  FROM locked
),
checked AS MATERIALIZED (
  SELECT
    last_seq,
    held,
    held AND has_previous AND coalesce(last_seq, -1) = @fromSeq::bigint - 1 AS appendable
  FROM point
),
ins AS (
  INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
  SELECT @sessionId::text, e.seq, e.type, e.time, e.data, e.source_event_seqs, e.surface_op
  FROM checked, unnest(
    @seq::bigint[], @type::text[], @time::bigint[], @data::text[],
    @sourceEventSeqs::text[], @surfaceOp::text[]
  ) AS e (seq, type, time, data, source_event_seqs, surface_op)
  WHERE checked.appendable
  ORDER BY e.seq
  RETURNING seq
),
pending AS (
  INSERT INTO search_pending (session_id, from_seq, through)
  SELECT @sessionId::text, min(ins.seq), max(ins.seq) FROM ins HAVING @searchable::boolean AND count(*) > 0
  ON CONFLICT (session_id) DO UPDATE
  SET from_seq = least(search_pending.from_seq, excluded.from_seq),
      through = greatest(search_pending.through, excluded.through)
),
summary AS (
  UPDATE catalog_summaries
  SET last_seq = (SELECT max(ins.seq) FROM ins), updated_at = @updatedAt,
    derived_title = coalesce(derived_title, @derivedTitle::text)
  WHERE session_id = @sessionId AND EXISTS (SELECT 1 FROM ins)
)
SELECT
  EXISTS (SELECT 1 FROM checked)::boolean AS found,
  (SELECT held FROM checked)::boolean AS held,
  (SELECT appendable FROM checked)::boolean AS appendable,
  (SELECT last_seq FROM checked)::bigint AS "lastSeq",
  (
    SELECT pg_notify(@channel::text, @sessionId::text) FROM checked WHERE appendable
  )::text AS notified;

-- name: lastTurnMarker
-- The last turn/start or turn/end at or before @boundary, walking the primary key backwards from
-- it. The backend reads `turn` from the data (data is text: a damaged row must not fail the query).
SELECT seq, type, data
FROM events
WHERE session_id = @sessionId AND seq <= @boundary AND type IN ('turn/start', 'turn/end')
ORDER BY seq DESC
LIMIT 1;

-- name: eventLines
-- The event rows of a session from seq @fromSeq on (0 for the whole log) in seq order, at most
-- @limit of them (NULL: no bound), each rebuilt as its JSONL line in envelope member order (type,
-- seq, time, data, then sourceEventSeqs and surfaceOp when not NULL), so that one JSON.parse per
-- row gives the event with the key order an export must write. A line that does not parse is a
-- damaged row. A range of the primary key: the rows after a page are never read.
SELECT
  seq,
  type,
  (
    '{"type":' || to_json(type)::text
    || ',"seq":' || seq
    || ',"time":' || time
    || ',"data":' || data
    || coalesce(',"sourceEventSeqs":' || source_event_seqs, '')
    || coalesce(',"surfaceOp":' || surface_op, '')
    || '}'
  )::text AS line
FROM events
WHERE session_id = @sessionId AND seq >= @fromSeq
ORDER BY seq
LIMIT @limit::bigint;

-- name: eventRows
-- The event rows of eventLines (from seq @fromSeq on, at most @limit, NULL: no bound) as their
-- columns in envelope member order, the JSON ones as text, for a read of many rows: the client
-- builds each event from its columns (a JSON.parse per JSON column), so the server does not build
-- a line per row. A JSON column that does not parse is a damaged row.
SELECT
  type,
  seq,
  time,
  data,
  source_event_seqs AS "sourceEventSeqs",
  surface_op AS "surfaceOp"
FROM events
WHERE session_id = @sessionId AND seq >= @fromSeq
ORDER BY seq
LIMIT @limit::bigint;

-- name: sessionPageWithin
-- The event rows of eventRows (from seq @fromSeq on, at most @limit, NULL: no bound) that fit in
-- a page of @maxBytes bytes of stored text, and the header, in one statement (one snapshot, one
-- round trip, no transaction): the rows up to @pageFrom (the proof row before a page, and the
-- page's first event) always, the others while the running sum of their sizes (the data and
-- sourceEventSeqs columns, whose sizes octet_length tells without reading a TOASTed value) is at
-- most @maxBytes. The running sum goes row by row in seq order, so the scan stops at the limit,
-- and a row past the budget is never read whole nor sent. "following", on every row, is the seq
-- of the next row of the range (NULL on its last): a page that ends on a row with one, before the
-- limit, was cut by bytes. Nothing in it needs the whole range before its first row is sent (no
-- count over the range, no sort): the rows stream as the primary key is walked, and the client
-- takes them in while the server reads on. "header", on the row at seq @fromSeq (the first, when
-- it is there), is the session's header as a JSON object in SessionHeader member order, NULL on
-- the others. No row at @fromSeq (no session, no rows from it on, a hole) gives no header: a
-- caller that needs it reads again in a transaction, as it does when a bad row needs the lookup
-- of a later turn/end.
SELECT
  type,
  seq,
  time,
  data,
  "sourceEventSeqs" AS "sourceEventSeqs",
  "surfaceOp" AS "surfaceOp",
  following AS following,
  CASE
    WHEN seq = @fromSeq::bigint THEN (
      SELECT
        json_build_object(
          'version', s.version,
          'id', s.id,
          'createdAt', s.created_at,
          'cwd', s.cwd,
          'parentSession', s.parent_session,
          'seedLength', s.seed_length
        )::text
      FROM sessions AS s
      WHERE s.id = @sessionId
    )
  END AS header
FROM (
  SELECT
    type,
    seq,
    time,
    data,
    source_event_seqs AS "sourceEventSeqs",
    surface_op AS "surfaceOp",
    sum(
      CASE
        WHEN seq >= @pageFrom::bigint
          THEN octet_length(data) + coalesce(octet_length(source_event_seqs), 0)
        ELSE 0
      END
    ) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS upto,
    lead(seq) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS following
  FROM events
  WHERE session_id = @sessionId AND seq >= @fromSeq
  ORDER BY seq
  LIMIT @limit::bigint
) AS ranged
WHERE seq <= @pageFrom::bigint OR upto <= @maxBytes::bigint
ORDER BY seq;

-- name: nextTurnEnd
-- The seq of the first turn/end at or after @fromSeq: asked when a page of eventLines found a
-- damaged row and no turn/end after it, to tell corruption (a turn/end follows) from a torn tail,
-- and by forkPoint for the turn/end closing a turn open at the boundary.
-- Walks the primary key forwards from @fromSeq and stops at the first turn/end.
SELECT seq
FROM events
WHERE session_id = @sessionId AND seq >= @fromSeq AND type = 'turn/end'
ORDER BY seq
LIMIT 1;

-- name: lastTurnEnd
-- The seq of the last turn/end of a session (no row when it has none): a walk of the primary key
-- backwards from the end that stops at the first turn/end. The events up to it are settled: damage
-- among them is corruption, never a torn tail.
SELECT seq FROM events WHERE session_id = @sessionId AND type = 'turn/end' ORDER BY seq DESC LIMIT 1;

-- name: settledRead
-- A writer resuming a log, in one statement (one snapshot, one round trip, no lock). First the
-- header row: the header columns and the seq of the last turn/end ("lastTurnEnd", NULL without
-- one), its event columns NULL; then the event rows, their header columns NULL, in seq order: the
-- message-producing rows (those with a surfaceOp: the running state holds them anyway, as its
-- surface), tail false, and the rows from the last turn/end on (from seq 0 without one), at most
-- @limit of them, tail true, as eventRows gives them. The message-producing rows after the last
-- turn/end come twice, once in each part. No session gives no row. The message-producing rows are
-- found by a scan of the session's rows, as a bounded read of them would be (a seq bound known
-- only at run time makes the planner walk the index instead, which costs more).
WITH last AS (
  SELECT seq FROM events WHERE session_id = @sessionId AND type = 'turn/end' ORDER BY seq DESC LIMIT 1
)
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT seq FROM last) AS "lastTurnEnd",
  NULL::boolean AS tail,
  NULL::text AS type,
  NULL::bigint AS seq,
  NULL::bigint AS time,
  NULL::text AS data,
  NULL::text AS "sourceEventSeqs",
  NULL::text AS "surfaceOp"
FROM sessions AS s
WHERE s.id = @sessionId
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, e.*
FROM (
  SELECT false AS tail, type, seq, time, data, source_event_seqs, surface_op
  FROM events
  WHERE session_id = @sessionId AND surface_op IS NOT NULL
  UNION ALL
  (
    SELECT true AS tail, type, seq, time, data, source_event_seqs, surface_op
    FROM events
    WHERE session_id = @sessionId AND seq >= coalesce((SELECT seq FROM last), 0)
    ORDER BY seq
    LIMIT @limit::bigint
  )
) AS e
ORDER BY seq NULLS FIRST, tail;

-- name: openTurnRead
-- forkPoint at the last intact event (what openTurn asks) in one statement (one snapshot, one
-- round trip, no transaction). First the header row: the header columns, the seq of the last
-- turn/end ("lastTurnEnd", NULL without one) and the last turn/start or turn/end of the log
-- ("markerSeq", "markerType", "markerData": data is text, a damaged row must not fail the query;
-- NULL without one), its event columns NULL; then the event rows after the last turn/end (from
-- seq 0 without one) in seq order, as eventRows gives them, their header columns NULL — from
-- @fromSeq on instead when they start at @settled (the rows of the open turn the backend found
-- intact before, less the last of them: see FramedTails). No session gives no row.
WITH last AS (
  SELECT seq FROM events WHERE session_id = @sessionId AND type = 'turn/end' ORDER BY seq DESC LIMIT 1
),
marker AS (
  SELECT seq, type, data
  FROM events
  WHERE session_id = @sessionId AND type IN ('turn/start', 'turn/end')
  ORDER BY seq DESC
  LIMIT 1
),
tail AS (
  SELECT coalesce((SELECT seq FROM last) + 1, 0) AS seq
)
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT seq FROM last) AS "lastTurnEnd",
  (SELECT seq FROM marker) AS "markerSeq",
  (SELECT type FROM marker) AS "markerType",
  (SELECT data FROM marker) AS "markerData",
  NULL::text AS type,
  NULL::bigint AS seq,
  NULL::bigint AS time,
  NULL::text AS data,
  NULL::text AS "sourceEventSeqs",
  NULL::text AS "surfaceOp"
FROM sessions AS s
WHERE s.id = @sessionId
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e.*
FROM (
  SELECT type, seq, time, data, source_event_seqs, surface_op
  FROM events
  WHERE session_id = @sessionId
    AND seq >= (
      SELECT CASE WHEN tail.seq = @settled::bigint THEN @fromSeq::bigint ELSE tail.seq END FROM tail
    )
) AS e
ORDER BY seq NULLS FIRST;

-- name: sessionFrom
-- loadFrom in one statement (one snapshot, one round trip, no lock): the header, with the event
-- rows from seq @fromSeq - 1 on rebuilt as their JSONL lines as in eventLines, at most @limit of
-- them (NULL: no bound). The row before the first new one proves that the stored log still extends
-- the prefix the reader has. A session with no such rows gives one row whose event columns are
-- NULL; no session gives no row. The event rows come from a walk of the primary key from
-- @fromSeq - 1 that stops at the limit (in a subquery: a LIMIT over the join would read and sort
-- every row after it), so that a reader with nothing new costs an index probe and the rows after a
-- page are never read.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  e.seq,
  e.type,
  e.line::text AS line
FROM sessions AS s
LEFT JOIN (
  SELECT
    seq,
    type,
    (
      '{"type":' || to_json(type)::text
      || ',"seq":' || seq
      || ',"time":' || time
      || ',"data":' || data
      || coalesce(',"sourceEventSeqs":' || source_event_seqs, '')
      || coalesce(',"surfaceOp":' || surface_op, '')
      || '}'
    )::text AS line
  FROM events
  WHERE session_id = @sessionId AND seq >= @fromSeq::bigint - 1
  ORDER BY seq
  LIMIT @limit::bigint
) AS e ON true
WHERE s.id = @sessionId
ORDER BY e.seq;

-- name: notifyChange
-- Tells every backend LISTENing on the schema's change channel (@channel) that session @sessionId
-- may have changed. Run inside each write transaction: PostgreSQL delivers it at commit, and only
-- if the transaction commits. The payload (an id of at most 256 UTF-16 units, at most 1 KiB of
-- UTF-8) stays under the 8000-byte limit.
SELECT pg_notify(@channel::text, @sessionId::text)::text AS notified;

-- name: listenChanges
-- Subscribes the listening connection to the schema's change channel (an identifier: LISTEN takes
-- no parameter). The subscription ends with the connection.
LISTEN {channel};

-- name: insertSession
INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length)
VALUES (@id, @version, @createdAt, @cwd, @parentSession, @seedLength);

-- name: insertEvents
-- A whole batch in one statement, one array per member (in seq order); data, sourceEventSeqs and
-- surfaceOp are JSON text ("append" is the JSON string), NULL where the event has none.
INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
SELECT @sessionId::text, e.seq, e.type, e.time, e.data, e.source_event_seqs, e.surface_op
FROM unnest(
  @seq::bigint[], @type::text[], @time::bigint[], @data::text[],
  @sourceEventSeqs::text[], @surfaceOp::text[]
) AS e (seq, type, time, data, source_event_seqs, surface_op)
ORDER BY e.seq;

-- name: copyEventPrefix
-- A fork's inherited prefix, copied inside the database: events 0…@boundary of @sourceId.
INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
SELECT @childId::text, seq, type, time, data, source_event_seqs, surface_op
FROM events
WHERE session_id = @sourceId AND seq <= @boundary
ORDER BY seq;

-- name: deleteEventsFrom
-- Repair: cuts a torn tail (every row from @keep on) before the closers are inserted.
DELETE FROM events WHERE session_id = @sessionId AND seq >= @keep;

-- name: deleteSession
-- The session's events go with it (ON DELETE CASCADE); its children keep their own copies.
DELETE FROM sessions WHERE id = @sessionId;

-- name: listSessions
-- One page in created order (newest first), strictly after the cursor (@afterAt: createdAt,
-- @afterId); the first page passes a cursor above every stored session. Walks sessions_by_created
-- without sorting (ids compare bytewise: the columns are COLLATE "C"). Each row carries the seq of the session's last event (NULL when it has none), read by a primary-key probe inside the statement, and its summary (last activity, titles).
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listSessionsInCwd
-- listSessions filtered by cwd, through sessions_by_cwd.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE s.cwd = @cwd AND (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listChildSessions
-- listSessions filtered by parent session, through sessions_by_parent_session.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE s.parent_session = @parentSession AND (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listChildSessionsInCwd
-- listSessions filtered by parent session and cwd (the planner picks the index).
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE s.parent_session = @parentSession AND s.cwd = @cwd
  AND (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listSessionsByActivity
-- One page in activity order (most recent activity first), strictly after the cursor (@afterAt:
-- last activity, @afterId); walks catalog_by_activity without sorting.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listSessionsInCwdByActivity
-- listSessionsByActivity filtered by cwd: the sessions of one folder (through sessions_by_cwd),
-- sorted by activity.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE s.cwd = @cwd AND (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listChildSessionsByActivity
-- listSessionsByActivity filtered by parent session (through sessions_by_parent_session), sorted.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE s.parent_session = @parentSession AND (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listChildSessionsInCwdByActivity
-- listSessionsByActivity filtered by parent session and cwd, sorted.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt",
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  m.derived_title AS "derivedTitle"
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE s.parent_session = @parentSession AND s.cwd = @cwd
  AND (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: insertSummary
-- A new session's summary, written with its sessions row: no event yet, activity @updatedAt.
INSERT INTO catalog_summaries (session_id, last_seq, updated_at, derived_title)
VALUES (@sessionId, NULL, @updatedAt, NULL);

-- name: touchSummary
-- After events were written: the seq of the last (@lastSeq), the last activity, and the derived
-- title when none was stored yet (@derivedTitle NULL: the batch has no user message; '': its
-- first user message gives no title, which is kept so that a later prompt's is not taken).
UPDATE catalog_summaries
SET last_seq = @lastSeq, updated_at = @updatedAt,
  derived_title = coalesce(derived_title, @derivedTitle::text)
WHERE session_id = @sessionId;

-- name: refreshSummary
-- A session's summary made anew from its log (after a fork's copy or a repair, or when the catalog
-- found it stale): the seq and time of its last event row (else its creation time), and
-- @derivedTitle, which the backend takes from the log's first user message.
INSERT INTO catalog_summaries (session_id, last_seq, updated_at, derived_title)
SELECT
  s.id,
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id),
  coalesce(
    (SELECT e.time FROM events AS e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1),
    s.created_at
  ),
  @derivedTitle::text
FROM sessions AS s
WHERE s.id = @sessionId
ON CONFLICT (session_id) DO UPDATE
SET last_seq = excluded.last_seq, updated_at = excluded.updated_at,
  derived_title = excluded.derived_title;

-- name: setTitle
-- Sets the explicit title of a stored session (the reference refuses an id that is not stored).
INSERT INTO session_titles (session_id, title) VALUES (@sessionId, @title::text)
ON CONFLICT (session_id) DO UPDATE SET title = excluded.title;

-- name: clearTitle
-- Clears the explicit title (nothing to do when there is none); also run when a session is made,
-- so that a title another build left behind for a deleted id is not inherited.
DELETE FROM session_titles WHERE session_id = @sessionId;

-- name: sessionTitles
-- The explicit and derived titles of a session (no row: no such session).
SELECT
  (SELECT t.title FROM session_titles AS t WHERE t.session_id = s.id)::text AS title,
  (SELECT m.derived_title FROM catalog_summaries AS m WHERE m.session_id = s.id)::text
    AS "derivedTitle"
FROM sessions AS s
WHERE s.id = @sessionId;

-- name: firstUserMessage
-- The data of a session's first user/message, walking the primary key from seq 0.
SELECT data FROM events WHERE session_id = @sessionId AND type = 'user/message' ORDER BY seq LIMIT 1;

-- name: lastEventTime
-- The time of a session's last event (no row: it has none).
SELECT time FROM events WHERE session_id = @sessionId ORDER BY seq DESC LIMIT 1;

-- name: idsWithPrefix
-- Up to @limit stored ids that start with @prefix, in byte order: a range of the primary key, from
-- the prefix to @end, the least text above every text that starts with it (the prefix's last code
-- point below U+10FFFF, plus one; NULL when there is none, for a prefix of U+10FFFF alone). The
-- columns are COLLATE "C": texts compare as UTF-8 bytes, which is code point order.
SELECT id FROM sessions
WHERE id >= @prefix AND (@end::text IS NULL OR id < @end::text)
ORDER BY id
LIMIT @limit;

-- name: countIdsWithPrefix
-- How many stored ids start with @prefix: the same range, counted.
SELECT count(*) AS count FROM sessions
WHERE id >= @prefix AND (@end::text IS NULL OR id < @end::text);

-- name: sessionIds
-- Every stored id, in no particular order (SessionBackend.ids): the primary key read whole.
SELECT id FROM sessions;

-- name: layoutObjects
-- Every relation of the target schema (tables, indexes, views, sequences…), each table with its
-- columns as `name type[ NOT NULL]`: none for a new schema, the generated layout's for one of ours.
-- Read from the catalog, so it works before the schema exists and writes nothing.
SELECT
  c.relkind::text AS kind,
  c.relname::text AS name,
  coalesce(
    string_agg(
      a.attname::text || ' ' || format_type(a.atttypid, a.atttypmod)
        || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
      ', ' ORDER BY a.attnum
    ),
    ''
  )::text AS columns
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute AS a
  ON a.attrelid = c.oid AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = @schema
GROUP BY c.relkind, c.relname
ORDER BY c.relname;

-- name: layoutVersions
-- The layout version record of the schema: exactly one row in a schema of ours.
SELECT version FROM seedline_layout ORDER BY version;

-- name: lockLayoutCreation
-- Serializes the creators of one schema until the transaction ends (@key: a hash of the schema).
SELECT pg_advisory_xact_lock(@key::bigint)::text AS locked;

-- name: createSchema
CREATE SCHEMA IF NOT EXISTS {schema};

-- name: takeWriterLock
-- Takes the writer lock of a session (@key: a hash of schema and id) for this connection, without
-- waiting (the server releases it when the connection ends, however it ends), and once it is
-- taken, in the same round trip, waits for every write transaction that holds the session's row
-- (FOR SHARE conflicts with the FOR NO KEY UPDATE of lockSessionRow and appendEvents) to end, so
-- that a write of a holder whose lock connection just died, checked by writerLockHeld before its
-- lock went, is committed (or rolled back) before the new holder reads the log. The lock is taken
-- first (its subquery kept apart by OFFSET 0), and the wait, an initplan, runs only when the CASE
-- reaches it: not when the lock is held elsewhere. No row (the session is not stored yet):
-- nothing to wait for.
SELECT
  t.locked::boolean AS locked,
  CASE
    WHEN t.locked THEN (SELECT count(*) FROM (SELECT 1 FROM sessions WHERE id = @sessionId FOR SHARE) AS w)
  END AS waited
FROM (SELECT pg_try_advisory_lock(@key::bigint)::boolean AS locked OFFSET 0) AS t;

-- name: writerLockHeld
-- Whether the connection with backend pid @pid holds the writer lock @key (a session-level
-- advisory lock on a bigint: classid the high 32 bits, objid the low 32, objsubid 1) in this
-- database. A write runs it after lockSessionRow, in its own transaction: an append is stored only
-- while its writer's lock is held (see takeWriterLock).
SELECT EXISTS (
  SELECT 1
  FROM pg_catalog.pg_locks AS l
  WHERE l.locktype = 'advisory'
    AND l.granted
    AND l.pid = @pid::integer
    AND l.database = (SELECT d.oid FROM pg_catalog.pg_database AS d WHERE d.datname = current_database())
    AND l.classid = ((@key::bigint >> 32) & 4294967295)::oid
    AND l.objid = (@key::bigint & 4294967295)::oid
    AND l.objsubid = 1
)::boolean AS held;

-- name: releaseWriterLock
SELECT pg_advisory_unlock(@key::bigint)::boolean AS released;

-- name: connectionSettings
-- What the connection runs with, for the checks on open and for diagnostics.
SELECT
  current_setting('synchronous_commit')::text AS "synchronousCommit",
  current_schema()::text AS "currentSchema",
  current_setting('server_encoding')::text AS "serverEncoding";

-- name: beginWrite
-- Appends, forks and repairs serialize per session through lockSessionRow; the primary key
-- (session_id, seq) refuses a duplicate seq whatever happens.
BEGIN ISOLATION LEVEL READ COMMITTED;

-- name: beginRead
-- A read of several statements sees one snapshot.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;

-- name: commit
COMMIT;

-- name: rollback
ROLLBACK;

-- The catalog (src/store/postgres/catalog.ts): derived data outside the canonical layout — each
-- session's summary here, the search index below — made by the statements below when missing, and
-- rebuilt from the events when its version row is missing or another (the layout policy ignores
-- its relations). Its version is POSTGRES_CATALOG_VERSION (sqlite-layout.json).

-- name: catalogExists
-- One row when the catalog's version table is there, read from pg_class in the statement's
-- snapshot: after the creation lock it sees what the creator before committed (to_regclass reads
-- a cache that an advisory lock does not refresh).
SELECT 1 AS found
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = 'catalog_version';

-- name: createCatalogVersion
CREATE TABLE IF NOT EXISTS catalog_version (
  version integer NOT NULL,
  CONSTRAINT catalog_version_pkey PRIMARY KEY (version)
);

-- name: catalogVersions
-- The catalog's version rows: one, POSTGRES_CATALOG_VERSION, in a catalog of this build.
SELECT version FROM catalog_version ORDER BY version;

-- name: stampCatalog
INSERT INTO catalog_version (version) VALUES (@version);

-- name: createCatalogSummaries
-- One row per stored session: the seq of its last event row (NULL: none; how a stale summary is
-- told), its last activity (its last event's time, else its creation time) and the title derived
-- from its first user message. Deleting the session deletes the row.
CREATE TABLE IF NOT EXISTS catalog_summaries (
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  last_seq bigint,
  updated_at bigint NOT NULL,
  derived_title text COLLATE "C",
  CONSTRAINT catalog_summaries_pkey PRIMARY KEY (session_id)
);

-- name: createCatalogByActivity
-- list() in activity order, most recent first, paged by an (updated_at, session_id) cursor.
CREATE INDEX IF NOT EXISTS catalog_by_activity
ON catalog_summaries (updated_at DESC, session_id DESC);

-- name: fillSummaries
-- A new catalog: one summary per stored session, from its last event row (else its creation
-- time); the derived titles are set after, one setDerivedTitle each.
INSERT INTO catalog_summaries (session_id, last_seq, updated_at, derived_title)
SELECT
  s.id,
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id),
  coalesce(
    (SELECT e.time FROM events AS e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1),
    s.created_at
  ),
  NULL
FROM sessions AS s;

-- name: firstUserMessages
-- A new catalog: each stored session that has a user/message, with the data of its first.
SELECT s.id AS "sessionId", u.data
FROM sessions AS s
JOIN events AS u ON u.session_id = s.id AND u.seq = (
  SELECT min(e.seq) FROM events AS e WHERE e.session_id = s.id AND e.type = 'user/message'
);

-- name: setDerivedTitle
UPDATE catalog_summaries SET derived_title = @derivedTitle::text WHERE session_id = @sessionId;

-- name: staleSummaries
-- The stored sessions whose summary is missing or behind their log (its last seq is not the log's:
-- another build wrote them): one primary-key probe each.
SELECT s.id AS "sessionId"
FROM sessions AS s
LEFT JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE m.session_id IS NULL
  OR m.last_seq IS DISTINCT FROM (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)
ORDER BY s.id;

-- name: dropCatalog
-- The catalog's tables and the search index, dropped before a catalog of another version is made
-- anew (the indexes go with their tables).
DROP TABLE IF EXISTS catalog_summaries, catalog_version, search_pending, search_texts;

-- The titles table: the explicit titles users set, which cannot be derived from the logs, so kept
-- apart from the catalog (never rebuilt, never dropped) with a version of its own,
-- POSTGRES_TITLES_VERSION: another version is refused untouched, as the layout is.

-- name: titlesExists
-- One row when the titles table's version table is there (read as catalogExists).
SELECT 1 AS found
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = 'titles_version';

-- name: createTitlesVersion
CREATE TABLE IF NOT EXISTS titles_version (
  version integer NOT NULL,
  CONSTRAINT titles_version_pkey PRIMARY KEY (version)
);

-- name: titlesVersions
SELECT version FROM titles_version ORDER BY version;

-- name: stampTitles
INSERT INTO titles_version (version) VALUES (@version);

-- name: createSessionTitles
-- One row per session with an explicit title; deleting the session deletes it.
CREATE TABLE IF NOT EXISTS session_titles (
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  title text COLLATE "C" NOT NULL,
  CONSTRAINT session_titles_pkey PRIMARY KEY (session_id)
);

-- The search index (src/store/postgres/search-index.ts): derived data outside the versioned layout,
-- made by createSearchTexts and createSearchPending when missing (the layout policy ignores it) and
-- filled from the stored events once. `text` is an event's searchable text folded (lower case, no
-- accents); strpos() on it is the substring rule of every backend. No extension is needed (pg_trgm
-- need not be there): a page walks the sessions in list order and probes each one's rows by the
-- primary key. Writes leave the texts to the next search: the rows they write wait in
-- search_pending, and that search makes their texts from the events first.

-- name: createSearchTexts
CREATE TABLE IF NOT EXISTS search_texts (
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  text text NOT NULL,
  CONSTRAINT search_texts_pkey PRIMARY KEY (session_id, seq)
);

-- name: createSearchPending
-- Per session, the rows seq from_seq..through that may have no text yet (appended, created,
-- repaired, or a fork's inherited ones its source had not indexed). A row in the range may have its
-- text already (the index step writes the missing ones); every row outside it has its text.
CREATE TABLE IF NOT EXISTS search_pending (
  session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  from_seq bigint NOT NULL,
  through bigint NOT NULL
);

-- name: searchIndexExists
-- One row when the index was made (to_regclass looks in the search_path: the target schema).
SELECT 1 AS found WHERE to_regclass('search_texts') IS NOT NULL;

-- name: searchPendingExists
-- One row when the table of rows waiting for their texts was made (an earlier build's index has
-- none: it wrote the texts with the events).
SELECT 1 AS found WHERE to_regclass('search_pending') IS NOT NULL;

-- name: insertSearchTexts
-- The folded texts of some rows, one array per member; a row that has its text keeps it (two
-- searches may make the texts of the same rows at once).
INSERT INTO search_texts (session_id, seq, text)
SELECT @sessionId::text, t.seq, t.text
FROM unnest(@seq::bigint[], @text::text[]) AS t (seq, text)
ON CONFLICT (session_id, seq) DO NOTHING;

-- name: markSearchPending
-- Rows @fromSeq..@through just written: the session's range takes them in.
INSERT INTO search_pending (session_id, from_seq, through)
VALUES (@sessionId, @fromSeq, @through)
ON CONFLICT (session_id) DO UPDATE
SET from_seq = least(search_pending.from_seq, excluded.from_seq),
    through = greatest(search_pending.through, excluded.through);

-- name: copySearchPrefix
-- A fork's inherited rows: the source's texts and the part of its range inside the prefix, in one
-- statement (one snapshot: a search making the source's texts meanwhile is seen wholly or not at all).
WITH texts AS (
  INSERT INTO search_texts (session_id, seq, text)
  SELECT @childId::text, seq, text FROM search_texts
  WHERE session_id = @sourceId AND seq <= @boundary
)
INSERT INTO search_pending (session_id, from_seq, through)
SELECT @childId::text, from_seq, least(through, @boundary::bigint) FROM search_pending
WHERE session_id = @sourceId AND from_seq <= @boundary;

-- name: deleteSearchTexts
-- Repair: the rows of a cut tail. (The session's range may reach past the end afterwards: the
-- index step finds no rows there.)
DELETE FROM search_texts WHERE session_id = @sessionId AND seq >= @keep;

-- name: searchPendingSessions
-- The sessions with rows waiting for their texts (none: nothing to do before a search).
SELECT session_id AS "sessionId" FROM search_pending ORDER BY session_id;

-- name: searchPendingOf
-- The session's range, read after its row is shared (shareSessionRowForIndex).
SELECT from_seq AS "fromSeq", through FROM search_pending WHERE session_id = @sessionId;

-- name: shareSessionRowForIndex
-- One row when the session is stored, keeping its writers (appends, repairs: FOR NO KEY UPDATE)
-- and its deletion out until the transaction ends, so that the rows read for their texts stay
-- what they are until the texts are written; other searches doing the same go on.
SELECT 1 AS found FROM sessions WHERE id = @sessionId FOR SHARE;

-- name: searchableRows
-- The rows of a session from @fromSeq through @through whose type carries searchable text
-- (@types, a JSON array), for the index step.
SELECT session_id AS "sessionId", seq, type, data
FROM events
WHERE session_id = @sessionId AND seq >= @fromSeq AND seq <= @through
  AND type IN (SELECT jsonb_array_elements_text(@types::jsonb))
ORDER BY seq;

-- name: advanceSearchPending
-- The session's rows through @indexed have their texts: the range starts after them, or goes.
WITH gone AS (
  DELETE FROM search_pending WHERE session_id = @sessionId AND through <= @indexed
)
UPDATE search_pending SET from_seq = @indexed::bigint + 1
WHERE session_id = @sessionId AND through > @indexed;

-- name: searchEventRows
-- The stored event rows after (@afterSessionId, @afterSeq), @limit of them, to fill a new index.
SELECT session_id AS "sessionId", seq, type, data
FROM events
WHERE (session_id, seq) > (@afterSessionId::text, @afterSeq::bigint)
ORDER BY session_id, seq
LIMIT @limit;

-- name: searchSessions
-- One page of the sessions (in list order: most recent activity first, after the cursor, in @cwd
-- when not NULL) with a row whose folded text holds every term of @terms, each row with its
-- session's last seq and last activity as listSessionsByActivity gives them. Walks
-- catalog_by_activity.
SELECT
  s.version,
  s.id,
  s.created_at AS "createdAt",
  s.cwd,
  s.parent_session AS "parentSession",
  s.seed_length AS "seedLength",
  (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)::bigint AS "lastSeq",
  m.updated_at AS "updatedAt"
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE (m.updated_at, m.session_id) < (@afterAt::bigint, @afterId::text)
  AND (@cwd::text IS NULL OR s.cwd = @cwd::text)
  AND (
    -- A scalar subquery, never turned into a join: each session is probed by the primary key in
    -- list order, and the walk stops once the page is full.
    SELECT true FROM search_texts AS t
    WHERE t.session_id = s.id
      AND NOT EXISTS (SELECT 1 FROM unnest(@terms::text[]) AS term WHERE strpos(t.text, term) = 0)
    LIMIT 1
  )
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: searchMatches
-- The first @limit events of each session of @ids whose folded text holds every term of @terms.
SELECT r.session_id AS "sessionId", r.seq, e.type, e.time, e.data
FROM (
  SELECT
    t.session_id,
    t.seq,
    row_number() OVER (PARTITION BY t.session_id ORDER BY t.seq) AS n
  FROM search_texts AS t
  WHERE t.session_id = ANY (@ids::text[])
    AND NOT EXISTS (SELECT 1 FROM unnest(@terms::text[]) AS term WHERE strpos(t.text, term) = 0)
) AS r
JOIN events AS e ON e.session_id = r.session_id AND e.seq = r.seq
WHERE r.n <= @limit
ORDER BY r.session_id, r.seq;
