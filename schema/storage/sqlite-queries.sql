-- Every SQL statement of the SQLite backend (src/store/sqlite/), by name, over layout 4 of
-- sqlite-layout.json. scripts/render-sqlite.ts prepares each one on a database made from the
-- generated DDL (a statement that does not prepare fails generation, naming it) and renders
-- generated/sqlite-queries.gen.ts. Format: a `-- name: <camelCase>` line, optional `--` lines that
-- document the statement, then exactly one statement. Parameters are named: `@name`.
-- Result columns are aliased to the camelCase member they fill, so src/ never names a column.

-- name: sessionExists
-- One row when the session is stored.
SELECT 1 AS found FROM sessions WHERE id = @sessionId;

-- name: sessionHeader
-- The header in SessionHeader member order; the backend drops the NULL members (absent, never null).
SELECT
  version,
  id,
  created_at AS createdAt,
  cwd,
  parent_session AS parentSession,
  seed_length AS seedLength
FROM sessions
WHERE id = @sessionId;

-- name: appendPoint
-- One row when the session is stored, with the seq of its last event row (NULL when it has none):
-- an O(log n) probe of the primary key, never a scan of the log.
SELECT (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id) AS lastSeq
FROM sessions AS s
WHERE s.id = @sessionId;

-- name: lastEvent
-- The last event row of a session, for list()'s eventCount and updatedAt: one indexed lookup.
SELECT seq, time FROM events WHERE session_id = @sessionId ORDER BY seq DESC LIMIT 1;

-- name: lastTurnMarker
-- The last turn/start or turn/end at or before @boundary, walking the primary key backwards from
-- it. `turn` is NULL when the row's data is not valid JSON (a damaged row).
SELECT
  seq,
  type,
  CASE WHEN json_valid(data) THEN json_extract(data, '$.turn') END AS turn
FROM events
WHERE session_id = @sessionId AND seq <= @boundary AND type IN ('turn/start', 'turn/end')
ORDER BY seq DESC
LIMIT 1;

-- name: eventRows
-- The event rows of a session from seq @fromSeq on (0 for the whole log) in seq order, at most
-- @limit of them (-1: no bound), as their columns in envelope member order (type, seq, time,
-- data, then sourceEventSeqs and surfaceOp, NULL when absent), the JSON ones as text: the reader
-- builds each event from its columns (a JSON.parse per JSON column), with the key order an export
-- must write. A JSON column that does not parse is a damaged row. A range of the primary key:
-- reading from the end of the log costs one index probe, and the rows after a page are never read.
SELECT
  type,
  seq,
  time,
  data,
  source_event_seqs AS sourceEventSeqs,
  surface_op AS surfaceOp
FROM events
WHERE session_id = @sessionId AND seq >= @fromSeq
ORDER BY seq
LIMIT @limit;

-- name: nextTurnEnd
-- The seq of the first turn/end at or after @fromSeq: asked when a page of eventRows found a
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

-- name: settledCount
-- How many event rows a session has before seq @settled: fewer than @settled is a hole.
SELECT count(*) AS count FROM events WHERE session_id = @sessionId AND seq < @settled;

-- name: settledLines
-- The settled part of a log, for resuming it: the message-producing event rows (those with a
-- surfaceOp) before seq @settled, in seq order, as their columns (the JSON ones as text): what the
-- running state holds anyway (its surface), so they are read at once. After a turn/end no turn, step or tool
-- call is open, so the running state at @settled needs nothing else of the log but the surface;
-- the other rows are neither read nor judged (they are checked when they are read).
SELECT
  type,
  seq,
  time,
  data,
  source_event_seqs AS sourceEventSeqs,
  surface_op AS surfaceOp
FROM events
WHERE session_id = @sessionId AND seq < @settled AND surface_op IS NOT NULL
ORDER BY seq;

-- name: insertSession
INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length)
VALUES (@id, @version, @createdAt, @cwd, @parentSession, @seedLength);

-- name: insertEvent
-- data, sourceEventSeqs and surfaceOp are bound as JSON text ("append" is the JSON string).
INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
VALUES (@sessionId, @seq, @type, @time, @data, @sourceEventSeqs, @surfaceOp);

-- name: copyEventPrefix
-- A fork's inherited prefix, copied inside the database: events 0…@boundary of @sourceId.
INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
SELECT @childId, seq, type, time, data, source_event_seqs, surface_op
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
-- without sorting. Each row carries its summary (last activity, titles) by a primary-key probe.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listSessionsInCwd
-- listSessions filtered by cwd, through sessions_by_cwd.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE s.cwd = @cwd AND (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listChildSessions
-- listSessions filtered by parent session, through sessions_by_parent_session.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM sessions AS s
JOIN catalog_summaries AS m ON m.session_id = s.id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE s.parent_session = @parentSession AND (s.created_at, s.id) < (@afterAt, @afterId)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @limit;

-- name: listChildSessionsInCwd
-- listSessions filtered by parent session and cwd: the children index, then the cwd filter.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM sessions AS s INDEXED BY sessions_by_parent_session
JOIN catalog_summaries AS m ON m.session_id = s.id
LEFT JOIN session_titles AS t ON t.session_id = s.id
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
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listSessionsInCwdByActivity
-- listSessionsByActivity filtered by cwd: the sessions of one folder (through sessions_by_cwd),
-- sorted by activity.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE s.cwd = @cwd AND (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listChildSessionsByActivity
-- listSessionsByActivity filtered by parent session (through sessions_by_parent_session), sorted.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE s.parent_session = @parentSession AND (m.updated_at, m.session_id) < (@afterAt, @afterId)
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: listChildSessionsInCwdByActivity
-- listSessionsByActivity filtered by parent session and cwd, sorted.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt,
  t.title,
  m.derived_title AS derivedTitle
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
LEFT JOIN session_titles AS t ON t.session_id = s.id
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
  derived_title = coalesce(derived_title, @derivedTitle)
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
  @derivedTitle
FROM sessions AS s
WHERE s.id = @sessionId
ON CONFLICT (session_id) DO UPDATE
SET last_seq = excluded.last_seq, updated_at = excluded.updated_at,
  derived_title = excluded.derived_title;

-- name: setTitle
-- Sets the explicit title of a stored session (the reference refuses an id that is not stored).
INSERT INTO session_titles (session_id, title) VALUES (@sessionId, @title)
ON CONFLICT (session_id) DO UPDATE SET title = excluded.title;

-- name: clearTitle
-- Clears the explicit title (nothing to do when there is none); also run when a session is made,
-- so that a title another build left behind for a deleted id is not inherited.
DELETE FROM session_titles WHERE session_id = @sessionId;

-- name: sessionTitles
-- The explicit and derived titles of a session (no row: no such session).
SELECT t.title, m.derived_title AS derivedTitle
FROM sessions AS s
LEFT JOIN catalog_summaries AS m ON m.session_id = s.id
LEFT JOIN session_titles AS t ON t.session_id = s.id
WHERE s.id = @sessionId;

-- name: firstUserMessage
-- The data of a session's first user/message, walking the primary key from seq 0.
SELECT data FROM events WHERE session_id = @sessionId AND type = 'user/message' ORDER BY seq LIMIT 1;

-- name: lastEventTime
-- The time of a session's last event (no row: it has none).
SELECT time FROM events WHERE session_id = @sessionId ORDER BY seq DESC LIMIT 1;

-- name: idsWithPrefix
-- Up to @limit stored ids that start with @prefix, in byte order: a range of the primary key
-- (every id with the prefix sorts below the prefix followed by the byte 0xFF, which UTF-8 never holds).
SELECT id FROM sessions
WHERE id >= @prefix AND id < CAST(@prefix || x'ff' AS TEXT)
ORDER BY id
LIMIT @limit;

-- name: countIdsWithPrefix
-- How many stored ids start with @prefix: the same range, counted.
SELECT count(*) AS count FROM sessions WHERE id >= @prefix AND id < CAST(@prefix || x'ff' AS TEXT);

-- name: sessionIds
-- Every stored id, in no particular order (SessionBackend.ids): the primary key read whole.
SELECT id FROM sessions;

-- name: staleSummaries
-- The stored sessions whose summary is missing or behind their log (its last seq is not the log's:
-- another build wrote them, or a write's catalog update was lost): one primary-key probe each.
SELECT s.id AS sessionId
FROM sessions AS s
LEFT JOIN catalog_summaries AS m ON m.session_id = s.id
WHERE m.session_id IS NULL
  OR m.last_seq IS NOT (SELECT max(e.seq) FROM events AS e WHERE e.session_id = s.id)
ORDER BY s.id;

-- name: orphanSummaries
-- How many summaries name a session that is no longer stored (deleted without the cascade).
SELECT count(*) AS count
FROM catalog_summaries AS m
WHERE NOT EXISTS (SELECT 1 FROM sessions AS s WHERE s.id = m.session_id);

-- name: deleteOrphanSummaries
DELETE FROM catalog_summaries
WHERE NOT EXISTS (SELECT 1 FROM sessions AS s WHERE s.id = catalog_summaries.session_id);

-- name: layoutVersion
-- The layout version stamped in the file header (PRAGMA user_version), read before anything else.
SELECT user_version AS userVersion FROM pragma_user_version();

-- name: schemaObjects
-- Every table, index and trigger of the database: empty for a new one, the generated layout's for
-- a database of ours.
SELECT type, name, tbl_name AS tableName, sql FROM sqlite_master ORDER BY type, name;

-- name: connectionSettings
-- The pragmas in force on this connection (synchronous: 1 NORMAL, 2 FULL, 3 EXTRA), for diagnostics.
SELECT
  s.synchronous AS synchronous,
  j.journal_mode AS journalMode,
  f.foreign_keys AS foreignKeys,
  b.timeout AS busyTimeoutMs
FROM pragma_synchronous() AS s, pragma_journal_mode() AS j, pragma_foreign_keys() AS f,
  pragma_busy_timeout() AS b;

-- name: dataVersion
-- Changes whenever another connection (of any process, this one's writer included) commits: the
-- cheap question a change poller asks every interval before it looks at any session.
SELECT data_version AS dataVersion FROM pragma_data_version();

-- name: watchedHeads
-- For each stored session among @ids (a JSON array of ids), its head as one JSON text: the row's
-- header columns and its rowid (a session deleted and stored anew under the same id, by another
-- process between two looks, has another createdAt or header, or another rowid), and its last
-- event row as `seq@time` (NULL when it has none; the time tells a repair that put back as many
-- rows as it cut): one probe of the primary key per id, never a scan of a log. A watched id that
-- is not stored has no row.
SELECT
  s.id AS id,
  json_array(
    s.rowid, s.version, s.created_at, s.cwd, s.parent_session, s.seed_length,
    (
      SELECT e.seq || '@' || e.time FROM events AS e
      WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1
    )
  ) AS head
FROM sessions AS s
WHERE s.id IN (SELECT value FROM json_each(@ids));

-- name: beginWrite
-- A write transaction takes the write lock at once (waiting up to busy_timeout), so it never has
-- to upgrade a read lock, which fails with SQLITE_BUSY instead of waiting.
BEGIN IMMEDIATE;

-- name: beginRead
-- A read transaction, so that a read of several statements sees one snapshot.
BEGIN DEFERRED;

-- name: commit
COMMIT;

-- name: rollback
ROLLBACK;

-- name: savepoint
-- One batch of a group commit: checked and all-or-nothing on its own inside the shared transaction.
SAVEPOINT batch;

-- name: releaseSavepoint
RELEASE batch;

-- name: rollbackToSavepoint
ROLLBACK TO batch;

-- The catalog (src/store/sqlite/catalog.ts): derived data outside the canonical layout — each
-- session's summary here, the search index below — made by the statements below when missing,
-- and rebuilt from the events when its version row is missing or another (the version policy
-- ignores its objects). Its version is SQLITE_CATALOG_VERSION (sqlite-layout.json).

-- name: catalogExists
-- One row when the catalog's version table is there.
SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'catalog_version';

-- name: createCatalogVersion
CREATE TABLE IF NOT EXISTS catalog_version (version INTEGER PRIMARY KEY) STRICT;

-- name: catalogVersions
-- The catalog's version rows: one, SQLITE_CATALOG_VERSION, in a catalog of this build.
SELECT version FROM catalog_version ORDER BY version;

-- name: stampCatalog
INSERT INTO catalog_version (version) VALUES (@version);

-- name: createCatalogSummaries
-- One row per stored session: the seq of its last event row (NULL: none; how a stale summary is
-- told), its last activity (its last event's time, else its creation time) and the title derived
-- from its first user message. Deleting the session deletes the row.
CREATE TABLE IF NOT EXISTS catalog_summaries (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  last_seq INTEGER,
  updated_at INTEGER NOT NULL,
  derived_title TEXT
) STRICT;

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
SELECT s.id AS sessionId, u.data
FROM sessions AS s
JOIN events AS u ON u.session_id = s.id AND u.seq = (
  SELECT min(e.seq) FROM events AS e WHERE e.session_id = s.id AND e.type = 'user/message'
);

-- name: setDerivedTitle
UPDATE catalog_summaries SET derived_title = @derivedTitle WHERE session_id = @sessionId;

-- name: dropCatalogSummaries
DROP TABLE IF EXISTS catalog_summaries;

-- name: dropCatalogVersion
DROP TABLE IF EXISTS catalog_version;

-- name: dropSearchFts
DROP TABLE IF EXISTS search_fts;

-- name: dropSearchTexts
DROP TABLE IF EXISTS search_texts;

-- name: dropSearchPending
DROP TABLE IF EXISTS search_pending;

-- The titles table: the explicit titles users set, which cannot be derived from the logs, so kept
-- apart from the catalog (never rebuilt, never dropped) with a version of its own,
-- SQLITE_TITLES_VERSION: another version is refused untouched, as the layout is.

-- name: titlesExists
SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'titles_version';

-- name: createTitlesVersion
CREATE TABLE IF NOT EXISTS titles_version (version INTEGER PRIMARY KEY) STRICT;

-- name: titlesVersions
SELECT version FROM titles_version ORDER BY version;

-- name: stampTitles
INSERT INTO titles_version (version) VALUES (@version);

-- name: createSessionTitles
-- One row per session with an explicit title; deleting the session deletes it.
CREATE TABLE IF NOT EXISTS session_titles (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  title TEXT NOT NULL
) STRICT;

-- The search index (src/store/sqlite/search-index.ts): derived data outside the versioned layout,
-- made by the create statements below when missing (the version policy ignores its objects) and
-- filled from the stored events once. `text` is an event's searchable text folded (lower case, no
-- accents); the FTS5 trigram index over it finds candidate rows for terms of three characters or
-- more, and instr() on the folded text decides, so matching is the substring rule of every backend.
-- Writes leave both to the next search: the rows they write wait in search_pending, and that
-- search makes their texts from the events and indexes them.

-- name: createSearchTexts
CREATE TABLE IF NOT EXISTS search_texts (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  UNIQUE (session_id, seq)
) STRICT;

-- name: createSearchFts
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
  text, content = 'search_texts', content_rowid = 'id', tokenize = 'trigram'
);

-- name: createSearchPending
-- Per session, the rows seq from_seq..through not yet in the trigram index: appended rows (created,
-- repaired), or a fork's inherited ones. An append leaves its range open (through the largest safe
-- integer: every later row too), so that the appends after it until the next search write nothing.
-- A row in the range may lack its text in search_texts (a write makes none; an earlier build wrote
-- them at append, and copied a fork's from its source): the next search writes the missing texts
-- from the events and indexes the range instead of the write (search-index.ts). Rows outside the
-- range have their texts and are indexed.
CREATE TABLE IF NOT EXISTS search_pending (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  from_seq INTEGER NOT NULL,
  through INTEGER NOT NULL
) STRICT;

-- name: searchIndexExists
-- One row when the index was made.
SELECT 1 AS found FROM sqlite_master WHERE name = 'search_texts';

-- name: searchPendingExists
-- One row when the table of unindexed ranges was made (an index made before it has none).
SELECT 1 AS found FROM sqlite_master WHERE name = 'search_pending';

-- name: searchUnindexedExists
-- One row when an earlier build's table of unindexed fork prefixes (seq 0..through) is there.
SELECT 1 AS found FROM sqlite_master WHERE name = 'search_unindexed';

-- name: createSearchUnindexed
-- An earlier build's table of unindexed fork prefixes (seq 0..through), made empty when missing
-- so that the open's move below runs the same on every store, then dropped.
CREATE TABLE IF NOT EXISTS search_unindexed (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  through INTEGER NOT NULL
) STRICT;

-- name: unindexedPrefixes
-- An earlier build's unindexed fork prefixes, moved into search_pending on open.
SELECT session_id AS sessionId, through FROM search_unindexed ORDER BY session_id;

-- name: dropSearchUnindexed
DROP TABLE search_unindexed;

-- name: clearPending
-- Before a backfill, which indexes every row.
DELETE FROM search_pending;

-- name: pendingOf
SELECT from_seq AS fromSeq, through FROM search_pending WHERE session_id = @sessionId;

-- name: markPending
-- Rows @fromSeq..@through just written: a new range, or the session's range extended when it ends
-- right before them (no change when it ends elsewhere — the caller reads it: an open range holds
-- them already, another is indexed first).
INSERT INTO search_pending (session_id, from_seq, through) VALUES (@sessionId, @fromSeq, @through)
ON CONFLICT (session_id) DO UPDATE SET through = excluded.through
WHERE through = excluded.from_seq - 1;

-- name: extendPending
-- Rows @fromSeq..@through written with no searchable type: the session's range, when it ends right
-- before them, takes them in (so that the next searchable rows still continue it).
UPDATE search_pending SET through = @through
WHERE session_id = @sessionId AND through = @fromSeq - 1;

-- name: replacePending
UPDATE search_pending SET from_seq = @fromSeq, through = @through WHERE session_id = @sessionId;

-- name: pendingSessions
SELECT session_id AS sessionId, from_seq AS fromSeq, through FROM search_pending
ORDER BY session_id;

-- name: anyPending
SELECT 1 AS found FROM search_pending LIMIT 1;

-- name: indexSearchRange
-- Adds the rows of a session from @fromSeq through @through to the trigram index.
INSERT INTO search_fts (rowid, text)
SELECT id, text FROM search_texts
WHERE session_id = @sessionId AND seq >= @fromSeq AND seq <= @through;

-- name: forgetPending
DELETE FROM search_pending WHERE session_id = @sessionId;

-- name: cutPending
-- After the rows from @fromSeq on were deleted: the unindexed range ends before them.
UPDATE search_pending SET through = @fromSeq - 1
WHERE session_id = @sessionId AND through >= @fromSeq;

-- name: dropEmptyPending
-- A range a cut left empty.
DELETE FROM search_pending WHERE session_id = @sessionId AND through < from_seq;

-- name: insertSearchText
-- A row that has its text already (an earlier build wrote it at append or copied it at a fork)
-- keeps it.
INSERT OR IGNORE INTO search_texts (session_id, seq, text) VALUES (@sessionId, @seq, @text);

-- name: indexSearchTexts
-- Adds the rows of a session from @fromSeq on to the trigram index (the backfill of a new index).
INSERT INTO search_fts (rowid, text)
SELECT id, text FROM search_texts WHERE session_id = @sessionId AND seq >= @fromSeq;

-- name: unindexSearchTexts
-- Takes the rows of a session from @fromSeq on out of the trigram index (before they are deleted),
-- passing over its unindexed range (the index holds none of those rows; FTS5 asked to forget a
-- row it never held corrupts itself).
INSERT INTO search_fts (search_fts, rowid, text)
SELECT 'delete', t.id, t.text FROM search_texts AS t
WHERE t.session_id = @sessionId AND t.seq >= @fromSeq
  AND NOT EXISTS (
    SELECT 1 FROM search_pending AS p
    WHERE p.session_id = @sessionId AND t.seq BETWEEN p.from_seq AND p.through
  );

-- name: deleteSearchTexts
DELETE FROM search_texts WHERE session_id = @sessionId AND seq >= @fromSeq;

-- name: searchEventRows
-- The stored event rows after (@afterSessionId, @afterSeq), @limit of them, to fill a new index a
-- page at a time.
SELECT session_id AS sessionId, seq, type, data
FROM events
WHERE (session_id, seq) > (@afterSessionId, @afterSeq)
ORDER BY session_id, seq
LIMIT @limit;

-- name: unindexedEventRows
-- The event rows of a session's unindexed range after @afterSeq through @through whose type carries
-- searchable text (@types, a JSON array) and that have no text yet, @limit of them in seq order: the
-- rows the next search makes texts of, a page at a time.
SELECT e.seq, e.type, e.data
FROM events AS e
WHERE e.session_id = @sessionId AND e.seq > @afterSeq AND e.seq <= @through
  AND e.type IN (SELECT value FROM json_each(@types))
  AND NOT EXISTS (
    SELECT 1 FROM search_texts AS t WHERE t.session_id = e.session_id AND t.seq = e.seq
  )
ORDER BY e.seq
LIMIT @limit;

-- name: searchSessions
-- One page of the sessions (in list order: most recent activity first, after the cursor, in @cwd
-- when not NULL) with a row whose folded text holds every term of @terms (a JSON array), among the
-- rows the trigram index gives for @match (an FTS5 query of the terms of three characters or more).
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE (m.updated_at, m.session_id) < (@afterAt, @afterId)
  AND (@cwd IS NULL OR s.cwd = @cwd)
  AND m.session_id IN (
    SELECT t.session_id FROM search_texts AS t
    WHERE t.id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH @match)
      AND NOT EXISTS (SELECT 1 FROM json_each(@terms) AS j WHERE instr(t.text, j.value) = 0)
  )
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: searchSessionsWalked
-- searchSessions by walking the sessions in list order (catalog_by_activity) and probing each
-- one's rows by (session_id, seq), stopping after @limit: for terms the trigram index cannot find
-- (all shorter than three characters), and for terms so common that the index would give most rows.
SELECT
  s.version,
  s.id,
  s.created_at AS createdAt,
  s.cwd,
  s.parent_session AS parentSession,
  s.seed_length AS seedLength,
  m.updated_at AS updatedAt
FROM catalog_summaries AS m
JOIN sessions AS s ON s.id = m.session_id
WHERE (m.updated_at, m.session_id) < (@afterAt, @afterId)
  AND (@cwd IS NULL OR s.cwd = @cwd)
  AND EXISTS (
    SELECT 1 FROM search_texts AS t
    WHERE t.session_id = m.session_id
      AND NOT EXISTS (SELECT 1 FROM json_each(@terms) AS j WHERE instr(t.text, j.value) = 0)
  )
ORDER BY m.updated_at DESC, m.session_id DESC
LIMIT @limit;

-- name: searchCandidates
-- How many rows the trigram index gives for @match, counted up to @cap: tells a rare term (use the
-- index) from a common one (walk the sessions).
SELECT count(*) AS candidates
FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH @match LIMIT @cap);

-- name: searchMatches
-- The first @limit events of a session whose folded text holds every term of @terms, in seq order.
SELECT e.seq, e.type, e.time, e.data
FROM search_texts AS t
JOIN events AS e ON e.session_id = t.session_id AND e.seq = t.seq
WHERE t.session_id = @sessionId
  AND NOT EXISTS (SELECT 1 FROM json_each(@terms) AS j WHERE instr(t.text, j.value) = 0)
ORDER BY t.seq
LIMIT @limit;
