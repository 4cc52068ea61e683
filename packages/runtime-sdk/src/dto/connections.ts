// Delegated Google connections: the OAuth round trip a product starts, the connections it keeps
// (only their ids and provider object lineage ever leave the service: no token, no e-mail), and the
// bounded Drive and Classroom round trips (docs/connections.md). Strict, bounded inputs.
import { z } from 'zod';

export const CONNECTION_LIMITS = {
  returnTargetChars: 2_048,
  documentNameChars: 200,
  /** 1 MiB of Markdown for a Drive document written or imported. */
  markdownBytes: 1_048_576,
  assignmentTitleChars: 200,
  assignmentDescriptionChars: 4_000,
  assignmentMaterials: 10,
  providerIdChars: 200,
  pageSize: 100,
  pageTokenChars: 1_024,
} as const;

const providerId = z.string().min(1).max(CONNECTION_LIMITS.providerIdChars).regex(/^[A-Za-z0-9_.-]+$/);

export const connectionServices = ['drive', 'classroom'] as const;

export const startConnectionInputSchema = z
  .strictObject({
    services: z
      .array(z.enum(connectionServices))
      .min(1)
      .max(2)
      .refine((list) => new Set(list).size === list.length, 'services must not repeat')
      .describe('drive and/or classroom; both adds the least-privilege Classroom course-read, roster-read and teacher-coursework scopes.'),
    returnTarget: z
      .url({ protocol: /^https$/ })
      .max(CONNECTION_LIMITS.returnTargetChars)
      .describe("Where the person returns after consent: the product's registered HTTPS return origin (any path under it) or an exact registered redirect URI."),
  })
  .meta({ id: 'StartConnectionRequest' });
export type StartConnectionInput = z.infer<typeof startConnectionInputSchema>;

export const connectionAttemptSchema = z
  .object({
    attemptId: z.uuid(),
    /** Send the person here (Google's consent screen). Single-use; expires at expiresAt. */
    authorizationUrl: z.string(),
    services: z.array(z.enum(connectionServices)),
    scopes: z.array(z.string()),
    expiresAt: z.string(),
  })
  .meta({ id: 'ConnectionAttempt' });
export type ConnectionAttempt = z.infer<typeof connectionAttemptSchema>;

export const connectionSchema = z
  .object({
    connectionId: z.uuid(),
    provider: z.literal('google'),
    services: z.array(z.enum(connectionServices)),
    grantedScopes: z.array(z.string()),
    state: z.enum(['active', 'revoked']),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'Connection' });
export type Connection = z.infer<typeof connectionSchema>;

export const connectionListSchema = z.object({ connections: z.array(connectionSchema), nextCursor: z.string().nullable() }).meta({ id: 'ConnectionList' });

export const connectionRevocationSchema = z
  .object({
    connection: connectionSchema,
    /** revoked: the provider revoked the grant; failed: it could not be reached, our tokens are deleted anyway; already_revoked: nothing to do. */
    providerRevocation: z.enum(['revoked', 'failed', 'already_revoked']),
  })
  .meta({ id: 'ConnectionRevocation' });

// ---- Drive ---------------------------------------------------------------------------------------

/** What a product keeps of a Drive file: its id and the version it last saw (provider object lineage). */
export const driveDocumentSchema = z
  .object({
    connectionId: z.uuid(),
    fileId: z.string(),
    name: z.string(),
    mimeType: z.string(),
    /** Drive's file version: pass it back as expectedVersion to update. */
    version: z.string(),
    modifiedTime: z.string(),
    /** True when this answer replays an earlier create with the same Idempotency-Key. */
    replayed: z.boolean(),
  })
  .meta({ id: 'DriveDocument' });
export type DriveDocument = z.infer<typeof driveDocumentSchema>;

export const createDriveDocumentInputSchema = z
  .strictObject({
    name: z.string().min(1).max(CONNECTION_LIMITS.documentNameChars),
    markdown: z.string().max(CONNECTION_LIMITS.markdownBytes).describe('The document, as Markdown (Drive converts it to a Google Doc). At most 1 MiB.'),
  })
  .meta({ id: 'CreateDriveDocumentRequest' });

export const updateDriveDocumentInputSchema = z
  .strictObject({
    expectedVersion: z.string().min(1).max(40).regex(/^[0-9]+$/).describe('The version last observed; if the file changed since, 409 drive_version_conflict and nothing is written.'),
    markdown: z.string().max(CONNECTION_LIMITS.markdownBytes),
  })
  .meta({ id: 'UpdateDriveDocumentRequest' });

export const driveImportInputSchema = z
  .strictObject({
    connectionId: z.uuid(),
    fileId: providerId,
    path: z.string().min(1).max(8192).describe('The hosted note to write, vault-relative, ending in .md.'),
    expectedRevision: z.string().optional().describe('The current revision of the note, when it exists.'),
    mode: z.enum(['preview', 'apply']).default('preview').describe('preview (default) writes nothing; apply needs Idempotency-Key.'),
  })
  .meta({ id: 'DriveImportRequest' });

// ---- Classroom -----------------------------------------------------------------------------------

export const classroomCourseListSchema = z
  .object({
    courses: z.array(z.object({ id: z.string(), name: z.string(), section: z.string().nullable(), room: z.string().nullable(), alternateLink: z.string().nullable() })),
    nextPageToken: z.string().nullable(),
  })
  .meta({ id: 'ClassroomCourseList' });

/** A roster: user ids and names only. Never an e-mail address, a photo or a grade. */
export const classroomRosterSchema = z
  .object({ students: z.array(z.object({ userId: z.string(), fullName: z.string() })), nextPageToken: z.string().nullable() })
  .meta({ id: 'ClassroomRoster' });

export const createAssignmentInputSchema = z
  .strictObject({
    title: z.string().min(1).max(CONNECTION_LIMITS.assignmentTitleChars),
    description: z.string().max(CONNECTION_LIMITS.assignmentDescriptionChars).optional(),
    materials: z.array(z.strictObject({ url: z.url({ protocol: /^https$/ }).max(2_048) })).max(CONNECTION_LIMITS.assignmentMaterials).optional(),
    dueDate: z.iso.date().optional().describe('YYYY-MM-DD (UTC).'),
    dueTime: z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/).optional().describe('HH:MM UTC; 23:59 when dueDate is given alone.'),
  })
  .meta({ id: 'CreateClassroomAssignmentRequest' });

export const classroomAssignmentSchema = z
  .object({
    connectionId: z.uuid(),
    courseId: z.string(),
    courseWorkId: z.string(),
    title: z.string(),
    state: z.string(),
    alternateLink: z.string().nullable(),
    replayed: z.boolean(),
  })
  .meta({ id: 'ClassroomAssignment' });

export const classroomAttachmentListSchema = z
  .object({
    submissions: z.array(
      z.object({
        submissionId: z.string(),
        userId: z.string(),
        state: z.string(),
        attachments: z.array(z.object({ kind: z.string(), title: z.string().nullable(), driveFileId: z.string().optional(), url: z.string().optional() })),
      }),
    ),
    nextPageToken: z.string().nullable(),
  })
  .meta({ id: 'ClassroomAttachmentList' });
