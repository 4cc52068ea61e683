// The OpenAPI document's table for the connection routes (api/openapi.ts merges it): success
// descriptions, request headers and the OAuth callback's redirect.
type OperationDoc = { headers?: readonly string[]; responses: Record<string, { description: string; headers?: readonly string[] }> };

export const connectionOperationDocs: Record<string, OperationDoc> = {
  startGoogleConnection: {
    responses: {
      201: { description: 'The attempt: the Google authorization URL to send the person to, the services and scopes asked, when it expires.' },
      200: { description: 'The unavailable envelope: no Google OAuth client is configured on this service.' },
    },
  },
  listConnections: { responses: { 200: { description: "A page of this installation's connections (no token, no e-mail), or unavailable." } } },
  getConnection: { responses: { 200: { description: 'One connection (service.connection envelope), or unavailable.' } } },
  revokeConnection: { responses: { 200: { description: 'The revoked connection and what Google answered (service.connection-revocation envelope).' } } },
  createDriveDocument: {
    headers: ['RuntimeIdempotencyKey'],
    responses: {
      201: { description: 'The created Google Doc: its lineage (fileId, version) to keep.' },
      200: { description: 'A replay of the create this Idempotency-Key already made (replayed: true), or unavailable.', headers: ['IdempotentReplayed'] },
    },
  },
  getDriveDocument: { responses: { 200: { description: "The file's current lineage." } } },
  updateDriveDocument: { responses: { 200: { description: 'The written file\'s new lineage.' } } },
  importDriveDocument: {
    headers: ['RuntimeIdempotencyKey'],
    responses: {
      200: { description: 'The preview (writes nothing), a replayed apply, or unavailable: the document lineage and the note publication.' },
      201: { description: 'Applied: the note was written through the knowledge core.' },
    },
  },
  listClassroomCourses: { responses: { 200: { description: "A page of the teacher's active courses." } } },
  listClassroomRoster: { responses: { 200: { description: "A page of the course's students: user id and name only." } } },
  createClassroomAssignment: {
    headers: ['RuntimeIdempotencyKey'],
    responses: {
      201: { description: 'The created assignment (courseWork id, title, state, link).' },
      200: { description: 'The assignment this Idempotency-Key already made (replayed: true), or unavailable.', headers: ['IdempotentReplayed'] },
    },
  },
  listAssignmentAttachments: { responses: { 200: { description: 'A page of submissions with their attachment metadata, no grades.' } } },
};
