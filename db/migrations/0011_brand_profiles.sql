-- Up Migration

-- Organization Brand Profiles: bounded presentation overrides, one per organization, applied after
-- authorization (domain/product-runtime/brands.ts). Presentation only: nothing here is an input of
-- the chain check. The domain validates first (with pointers and codes); these checks are the floor.
CREATE TABLE organization_brand_profiles (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  display_name text CHECK (length(display_name) BETWEEN 1 AND 80),
  color_primary text CHECK (color_primary ~ '^#[0-9a-f]{6}$'),
  color_accent text CHECK (color_accent ~ '^#[0-9a-f]{6}$'),
  color_background text CHECK (color_background ~ '^#[0-9a-f]{6}$'),
  color_text text CHECK (color_text ~ '^#[0-9a-f]{6}$'),
  -- Text and background are judged as a pair (their contrast), so they are set together.
  CHECK ((color_background IS NULL) = (color_text IS NULL)),
  -- Term key → display string (keys from the packs' terminology lists, at most 40).
  terminology jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(terminology) = 'object'),
  -- An https URL or an opaque asset id; never fetched by the service.
  logo_ref text CHECK (length(logo_ref) BETWEEN 1 AND 2048),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Custom branded hosts: a lower-cased hostname, unique across the platform, resolving to one
-- organization's public presentation (and optionally one product definition's pack terminology).
CREATE TABLE brand_hosts (
  hostname text PRIMARY KEY CHECK (hostname = lower(hostname) AND length(hostname) BETWEEN 1 AND 253),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  product_definition_id uuid REFERENCES product_definitions (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX brand_hosts_organization_idx ON brand_hosts (organization_id, hostname);

-- The domain composition a product definition uses: a pack of domain/product-runtime/packs/ by id
-- and major version (`education@1`). Null: no composition (getDomainComposition answers unavailable).
ALTER TABLE product_definitions
  ADD COLUMN pack_id text CHECK (pack_id ~ '^[a-z][a-z0-9-]{0,62}$'),
  ADD COLUMN pack_version integer CHECK (pack_version > 0),
  ADD CONSTRAINT product_definitions_pack_pair CHECK ((pack_id IS NULL) = (pack_version IS NULL));

-- Down Migration
ALTER TABLE product_definitions DROP CONSTRAINT product_definitions_pack_pair, DROP COLUMN pack_version, DROP COLUMN pack_id;
DROP TABLE brand_hosts;
DROP TABLE organization_brand_profiles;
