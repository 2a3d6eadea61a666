-- Core domain: entities, their relationships and references, events with their
-- entity roles and evidence, prediction markets.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- norm_text folds case and accents so that name lookups are case- and
-- accent-insensitive. unaccent() is only STABLE, so it is wrapped with its
-- dictionary named explicitly to be usable in indexes.
CREATE OR REPLACE FUNCTION norm_text(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, t)) $$;

CREATE TABLE entities (
    id             bigint PRIMARY KEY,
    canonical_name text   NOT NULL,
    display_name   text   NOT NULL,
    entity_type    text   NOT NULL DEFAULT 'project',
    status         text   NOT NULL DEFAULT 'active',
    aliases        text[] NOT NULL DEFAULT '{}',
    -- popularity: number of events the entity owns or takes part in; the
    -- documented tie-breaker for name resolution. Maintained by ingest.
    event_count    bigint NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entities_canonical_name_idx ON entities (canonical_name, id);

-- entity_names holds every name an entity answers to (canonical, display,
-- aliases), normalized, so resolution is index scans: exact and prefix via
-- btree text_pattern_ops, fuzzy and token via trigram GIN.
CREATE TABLE entity_names (
    entity_id bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    kind      text   NOT NULL CHECK (kind IN ('canonical_name', 'display_name', 'alias')),
    value     text   NOT NULL,
    norm      text   NOT NULL,
    PRIMARY KEY (entity_id, kind, value)
);
CREATE INDEX entity_names_norm_idx ON entity_names (norm text_pattern_ops);
CREATE INDEX entity_names_trgm_idx ON entity_names USING gin (norm gin_trgm_ops);

CREATE TABLE relationships (
    source_entity_id  bigint  NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id  bigint  NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relationship_type text    NOT NULL,
    status            text    NOT NULL DEFAULT 'active',
    search_expand     boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_entity_id, target_entity_id, relationship_type)
);
CREATE INDEX relationships_target_idx ON relationships (target_entity_id, source_entity_id);

CREATE TABLE entity_references (
    id             bigint PRIMARY KEY,
    entity_id      bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    reference_type text   NOT NULL DEFAULT 'website',
    title          text   NOT NULL DEFAULT '',
    url            text   NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entity_references_entity_idx ON entity_references (entity_id, id);

CREATE TABLE events (
    id                        bigint PRIMARY KEY,
    title                     text   NOT NULL,
    category                  text   NOT NULL,
    subcategory               text   NOT NULL DEFAULT '',
    summary                   text   NOT NULL DEFAULT '',
    bullets                   text[] NOT NULL DEFAULT '{}',
    -- significance is NULL for a radar-only event; a signal has a score.
    significance              double precision,
    -- content_type classifies research, commentary, analysis and media items.
    content_type              text CHECK (content_type IN ('research', 'commentary', 'analysis', 'media')),
    latest_evidence_at        timestamptz NOT NULL,
    evidence_text             text   NOT NULL DEFAULT '',
    search                    tsvector,
    -- ingest_seq grows with every insert or change; the webhook poller's
    -- high-water mark reads it.
    ingest_seq                bigint NOT NULL DEFAULT 0,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE SEQUENCE events_ingest_seq;
-- Recency feeds and keyset cursors.
CREATE INDEX events_recency_idx ON events (latest_evidence_at DESC, id DESC);
-- Significance feeds: walk by score, filter the window from the index.
CREATE INDEX events_significance_idx ON events (significance DESC NULLS LAST, id DESC) INCLUDE (latest_evidence_at);
CREATE INDEX events_signal_recency_idx ON events (latest_evidence_at DESC, id DESC) WHERE significance IS NOT NULL;
CREATE INDEX events_category_idx ON events (category, latest_evidence_at DESC, id DESC);
CREATE INDEX events_search_idx ON events USING gin (search);
CREATE INDEX events_ingest_seq_idx ON events (ingest_seq);

-- The search vector is maintained by the database: title (A), summary (B),
-- bullets (C), evidence text (D).
CREATE OR REPLACE FUNCTION events_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search :=
        setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.summary, '')), 'B') ||
        setweight(to_tsvector('english', coalesce(array_to_string(NEW.bullets, ' '), '')), 'C') ||
        setweight(to_tsvector('english', coalesce(NEW.evidence_text, '')), 'D');
    RETURN NEW;
END $$;
CREATE TRIGGER events_search_trg BEFORE INSERT OR UPDATE OF title, summary, bullets, evidence_text
    ON events FOR EACH ROW EXECUTE FUNCTION events_search_update();

-- event_entities links events to entities by role. The event's time, score
-- and classification are copied here so per-entity feeds are index scans.
CREATE TABLE event_entities (
    event_id           bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    entity_id          bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    role               text   NOT NULL CHECK (role IN ('owner', 'participant')),
    position           int    NOT NULL DEFAULT 0,
    latest_evidence_at timestamptz NOT NULL,
    significance       double precision,
    content_type       text,
    category           text   NOT NULL DEFAULT '',
    PRIMARY KEY (event_id, role, entity_id)
);
CREATE INDEX event_entities_entity_recency_idx ON event_entities (entity_id, latest_evidence_at DESC, event_id DESC);
CREATE INDEX event_entities_entity_content_idx ON event_entities (entity_id, content_type, latest_evidence_at DESC, event_id DESC) WHERE content_type IS NOT NULL;

CREATE TABLE evidence (
    id       bigint PRIMARY KEY,
    event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    content  text   NOT NULL DEFAULT '',
    url      text   NOT NULL DEFAULT '',
    ts       timestamptz NOT NULL
);
CREATE INDEX evidence_event_idx ON evidence (event_id, ts DESC, id);

CREATE TABLE markets (
    id          bigint PRIMARY KEY,
    entity_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    question    text   NOT NULL,
    url         text   NOT NULL DEFAULT '',
    outcomes    text[] NOT NULL DEFAULT '{}',
    probability double precision,
    volume      double precision,
    closes_at   timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX markets_entity_idx ON markets (entity_id, id);

CREATE TABLE market_subevents (
    id               bigint PRIMARY KEY,
    market_id        bigint NOT NULL REFERENCES markets (id) ON DELETE CASCADE,
    label            text   NOT NULL DEFAULT '',
    subevent_type    text   NOT NULL DEFAULT '',
    normalized_title text   NOT NULL DEFAULT '',
    injected_summary text   NOT NULL DEFAULT ''
);
CREATE INDEX market_subevents_market_idx ON market_subevents (market_id, id);

CREATE TABLE market_posts (
    id          bigint PRIMARY KEY,
    subevent_id bigint NOT NULL REFERENCES market_subevents (id) ON DELETE CASCADE,
    content     text   NOT NULL DEFAULT '',
    posted_at   timestamptz NOT NULL
);
CREATE INDEX market_posts_subevent_idx ON market_posts (subevent_id, posted_at DESC, id);
