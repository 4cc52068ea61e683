// The one catalog of error codes. Every failure a client can see is an AppError carrying one of
// these codes; the HTTP edge renders it as problem+json, MCP mirrors the same code. Clients branch
// on status + code, never on the text, so a code, once published, never changes meaning.

export const errorCatalog = {
  // request shape
  invalid_request: { status: 400, title: 'The request is not valid.' },
  malformed_json: { status: 400, title: 'The request body is not valid JSON.' },
  unsupported_media_type: { status: 415, title: 'The request body has an unsupported content type.' },
  payload_too_large: { status: 413, title: 'The request body is larger than allowed.' },
  route_not_found: { status: 404, title: 'No route matches this method and path.' },
  method_not_allowed: { status: 405, title: 'This method is not allowed on this path.' },
  invalid_character: { status: 400, title: 'A string in the request contains U+0000 (NUL), which no string may hold.' },
  json_too_deep: { status: 400, title: 'The JSON body is nested deeper than allowed.' },
  duplicate_header: { status: 400, title: 'A header that must appear once was sent more than once.' },
  uri_too_long: { status: 414, title: 'A path segment of the URL is longer than allowed.' },
  headers_too_large: { status: 431, title: 'The request headers are larger than allowed.' },
  request_timeout: { status: 408, title: 'The request was not received in time.' },
  // authentication and entitlement
  authentication_required: { status: 401, title: 'A bearer token is required.' },
  invalid_token: { status: 401, title: 'The bearer token is not valid, expired, rotated or revoked.' },
  account_inactive: { status: 403, title: 'The account is not active.' },
  entitlement_required: { status: 403, title: "The account's plan does not include this interface." },
  permission_denied: { status: 403, title: 'The caller lacks the workspace permission this operation needs.' },
  // OAuth 2.1 for the MCP endpoint (api/routes/oauth, domain/oauth)
  insufficient_scope: { status: 403, title: 'The OAuth authorization lacks the scope this operation needs; authorize again asking for it.' },
  oauth_unavailable: { status: 404, title: 'This server has no public base URL (PUBLIC_BASE_URL), so it publishes no OAuth metadata.' },
  // reviewer console (api/routes/console)
  session_invalid: { status: 401, title: 'The console session is missing, expired or signed out, or its token was revoked; sign in again.' },
  csrf_check_failed: { status: 403, title: "The request did not come from the console's own pages (no or another session's CSRF token, or another origin)." },
  live_updates_unavailable: { status: 503, title: 'Live updates cannot be streamed from this process now (it holds as many streams as it may, or serves none); the page refreshes by polling instead.' },
  // product runtime chain
  credential_invalid: { status: 401, title: 'The service credential is not valid, expired or revoked.' },
  service_principal_inactive: { status: 403, title: 'The service principal is disabled.' },
  installation_inactive: { status: 403, title: 'The customer installation is not active.' },
  product_definition_inactive: { status: 403, title: 'The product definition is not active.' },
  organization_inactive: { status: 403, title: 'The organization is not active.' },
  scope_missing: { status: 403, title: 'The credential lacks the scope this operation needs.' },
  workspace_not_assigned: { status: 403, title: "The installation's workspace is not assigned to its organization." },
  vault_not_granted: { status: 403, title: 'The installation holds no grant on this logical vault.' },
  runtime_version_invalid: { status: 400, title: 'X-Service-Runtime-Version must be one version number, e.g. 1.' },
  runtime_version_unsupported: { status: 400, title: 'This runtime version is not supported; see supportedVersions.' },
  organization_quota_exhausted: { status: 429, title: "The product organization's monthly API operations are used up." },
  vault_not_found: { status: 404, title: 'No hosted vault with this id is visible to the caller.' },
  context_scope_not_found: { status: 404, title: 'No context scope with this id is visible to the caller.' },
  presentation_not_found: { status: 404, title: 'No public presentation is configured for this host.' },
  installation_not_found: { status: 404, title: 'No product installation with this id is visible to the caller.' },
  vault_grant_not_found: { status: 404, title: 'No vault grant with this id is visible to the caller.' },
  binding_request_not_found: { status: 404, title: 'No vault binding request with this id is visible to the caller.' },
  capability_unavailable: { status: 503, title: 'The capability this operation needs is not available; see missing.' },
  // metered intelligence (docs/intelligence.md)
  intelligence_budget_missing: { status: 403, title: 'The organization has no intelligence budget; a missing or zero budget fails closed.' },
  intelligence_budget_exhausted: { status: 429, title: "The organization's monthly intelligence budget cannot cover this request's maximum cost." },
  intelligence_sublimit_exhausted: { status: 429, title: "The installation's monthly intelligence sublimit cannot cover this request's maximum cost." },
  intelligence_concurrency_exhausted: { status: 429, title: "The organization's concurrent intelligence executions are all in use." },
  intelligence_reservation_expired: { status: 409, title: 'The reservation expired before the request was dispatched; nothing was generated or charged.' },
  intelligence_request_failed: { status: 409, title: 'This Idempotency-Key belongs to a request that failed after the provider accepted it (a billable failure); use a new key.' },
  intelligence_provider_rate_limited: { status: 503, title: 'The model provider is rate limiting this service; nothing was charged.' },
  intelligence_provider_refused: { status: 422, title: 'The model provider refused the request; nothing was charged.' },
  intelligence_provider_error: { status: 502, title: 'The model provider failed before accepting the request; nothing was charged.' },
  intelligence_provider_unreachable: { status: 502, title: 'The model provider could not be reached; nothing was charged.' },
  intelligence_provider_timeout: { status: 504, title: 'The model provider did not answer in time; nothing was charged.' },
  intelligence_provider_misconfigured: { status: 502, title: "The service's model provider configuration was refused by the provider; nothing was charged." },
  intelligence_interrupted: { status: 502, title: 'The provider accepted the request but it did not complete; recorded as a billable failure.' },
  intelligence_output_invalid: { status: 502, title: 'The provider answered something that is not the promised output; recorded as a billable failure.' },
  workflow_service_unavailable: { status: 503, title: 'The workflow service (Temporal) did not answer in time; nothing was confirmed. Read the resource before repeating the request, after Retry-After.' },
  intelligence_output_unreadable: { status: 502, title: "The provider's answer could not be read by the service (an image behind a URL it may not fetch, too large or not an image); released, nothing was charged." },
  education_context_learner_record: { status: 422, title: 'The education context contains learner-record language (a person, their record, diagnosis, scores or contact details); only aggregate class context is accepted.' },
  student_guidance_refused: { status: 422, title: 'The generated guidance failed the fail-closed policy (an answer, a link or a contact request); it is withheld, not repaired.' },
  usage_receipt_not_found: { status: 404, title: 'No usage receipt with this id is visible to the caller.' },
  generation_not_found: { status: 404, title: 'No generation with this id is visible to the caller.' },
  generation_expired: { status: 410, title: "This generation's events are past the retention window; its status and receipt are still at GET …/intelligence/generations/{generationId}." },
  generation_position_invalid: { status: 400, title: 'after and Last-Event-ID must each be one non-negative integer (the seq of the last event seen), and agree when both are sent.' },
  generation_events_not_acceptable: { status: 406, title: 'The events of a generation are served as application/x-ndjson or text/event-stream.' },
  generation_readers_exhausted: { status: 503, title: "This API process follows as many generations' events as it may; retry after Retry-After (any API serves them) or read the generation's status." },
  generation_cancelled: { status: 409, title: 'The generation was cancelled (POST …/generations/{generationId}/cancel); the text so far is kept in its events.' },
  // private audio media (docs/media.md)
  media_empty: { status: 400, title: 'The upload has no bytes; send the audio as the request body.' },
  media_reference_invalid: { status: 400, title: 'X-Media-Reference must be 1–200 visible ASCII characters (an opaque reference of the product).' },
  media_duration_invalid: { status: 400, title: 'X-Media-Duration-Seconds must be a positive number of seconds with at most 3 decimals.' },
  media_duration_exceeded: { status: 422, title: 'The audio is longer than 120 seconds (declared, or as its container states).' },
  media_duration_mismatch: { status: 422, title: "The declared duration grossly contradicts the duration the audio's container states." },
  media_type_unsupported: { status: 415, title: 'The bytes are not WebM, Ogg or MP4 audio (recognized from the bytes; the declared type is not trusted).' },
  media_truncated: { status: 422, title: 'The audio container is truncated or malformed.' },
  media_storage_exhausted: { status: 409, title: "The organization's media storage cannot hold this upload; delete media to free space." },
  media_storage_unavailable: { status: 503, title: 'Media storage is unavailable; nothing was stored and no quota was used.' },
  media_upload_outcome_unknown: { status: 503, title: "Media storage failed during the upload and could not confirm whether the bytes were kept; the upload's size stays held until that is confirmed. Retry with the same Idempotency-Key after Retry-After." },
  media_read_unavailable: { status: 503, title: 'The media exists, but its bytes cannot be read from storage right now; nothing changed. Retry after Retry-After.' },
  media_deletion_pending: { status: 503, title: 'The media is deleted and no longer readable, but the removal of its bytes from storage is not confirmed yet; its size stays counted until a retried DELETE or the sweep confirms it.' },
  media_not_found: { status: 404, title: 'No media with this id is visible to the caller.' },
  range_not_satisfiable: { status: 416, title: 'The requested byte range is outside the media.' },
  // delegated connections (domain/connections/)
  connection_not_found: { status: 404, title: 'No delegated connection with this id is visible to the caller.' },
  connection_reauthorization_required: { status: 409, title: 'The provider no longer accepts this connection; the person must connect again.' },
  oauth_return_target_mismatch: { status: 400, title: "The return target is not one of the product's registered HTTPS return origins or redirect URIs." },
  connections_not_configured: { status: 503, title: 'Delegated connections are not configured on this service.' },
  oauth_state_invalid: { status: 400, title: 'This OAuth callback carries no state this service issued.' },
  connection_provider_error: { status: 502, title: 'Google failed or could not be reached; if this was a write, retry it with the same Idempotency-Key.' },
  connection_provider_timeout: { status: 504, title: 'Google did not answer in time; if this was a write, retry it with the same Idempotency-Key.' },
  connection_provider_rate_limited: { status: 503, title: 'Google is rate limiting this connection; retry later.' },
  connection_provider_forbidden: { status: 403, title: 'Google refused: the connection lacks the scope, or the object is not the person\'s to use.' },
  connection_provider_not_found: { status: 404, title: 'Google has no such object for this connection.' },
  drive_version_conflict: { status: 409, title: 'The Drive file changed since the version given; nothing was written (see current).' },
  drive_content_too_large: { status: 413, title: "The Drive file's text is larger than an import may read." },
  drive_unsupported_file: { status: 415, title: 'The Drive file has no readable text (neither a Google Doc nor a text file).' },
  // resources
  not_found: { status: 404, title: 'The resource does not exist or is not visible to the caller.' },
  mapping_not_found: { status: 404, title: 'No hosted mapping with this id is visible to the caller.' },
  workspace_not_found: { status: 404, title: 'No workspace with this id is visible to the caller.' },
  conflict: { status: 409, title: 'The request conflicts with the current state.' },
  // notes and the knowledge-transaction boundary
  invalid_path: { status: 400, title: 'The note path breaks the path rules.' },
  path_not_addressable: { status: 400, title: 'This route addresses exactly two path segments (category/filename); that note is read through the inventory or MCP.' },
  invalid_revision: { status: 400, title: 'A revision must look like sha256:<64 hex digits>, quoted or bare.' },
  mapping_mismatch: { status: 400, title: 'The body mappingId and the X-Service-Mapping header disagree.' },
  duplicate_path: { status: 400, title: 'A transaction names the same note path twice.' },
  note_too_large: { status: 413, title: 'The note content is larger than the limit.' },
  transaction_too_large: { status: 413, title: 'The transaction has too many actions or too much content.' },
  note_not_found: { status: 404, title: 'No live note at this path in this vault.' },
  trash_item_not_found: { status: 404, title: 'No trash item with this id in this vault.' },
  revision_required: { status: 428, title: 'Replacing or deleting an existing note needs its current revision.' },
  revision_conflict: { status: 409, title: 'The expected revision is stale; the note changed since it was read.' },
  precondition_failed: { status: 412, title: 'An HTTP precondition (If-Match / If-None-Match) failed.' },
  path_case_conflict: { status: 409, title: 'A note whose path differs only by letter case already exists.' },
  note_exists: { status: 409, title: 'A live note already exists at this path.' },
  trash_item_restored: { status: 409, title: 'This trash item was already restored.' },
  idempotency_key_required: { status: 400, title: 'Applying a change needs an Idempotency-Key header.' },
  invalid_idempotency_key: { status: 400, title: 'The Idempotency-Key must be 1–255 visible ASCII characters.' },
  idempotency_key_reused: { status: 422, title: 'This Idempotency-Key was used with a different request.' },
  idempotency_in_flight: { status: 409, title: 'A request with this Idempotency-Key is still being processed.' },
  invalid_canvas: { status: 400, title: 'The canvas is not a valid JSON Canvas document within the limits.' },
  // automation
  proposal_not_found: { status: 404, title: 'No action proposal with this id is visible to the caller.' },
  self_approval_forbidden: { status: 403, title: 'The proposer, or anyone acting for them, cannot decide on their own proposal.' },
  proposal_not_pending: { status: 409, title: 'The proposal is not waiting for review.' },
  proposal_not_executed: { status: 409, title: 'Only an executed proposal can be undone, once.' },
  // allowances
  rate_limited: { status: 429, title: 'Too many requests this minute.' },
  monthly_limit_exceeded: { status: 429, title: "The plan's monthly request allowance is used up." },
  // platform
  not_ready: { status: 503, title: 'A dependency of the service is unavailable.' },
  database_unavailable: { status: 503, title: 'The database is unreachable; retry after Retry-After. Nothing was changed, unless the outage began in the middle of a write: then it may or may not have been applied, and retrying it with the same Idempotency-Key applies it once or replays its result.' },
  internal_error: { status: 500, title: 'An unexpected error occurred.' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalog;

export type ErrorPointer = { pointer: string; message: string; code?: string };

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: { extensions?: Record<string, unknown>; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(detail ?? errorCatalog[code].title);
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? errorCatalog[code].status;
    this.detail = detail;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** Whether a string (a stored or remote code) is one of ours. */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorCatalog, code);
}
