// Classroom round trips over an access token, through @googleapis/classroom pointed at the
// configured root. Token refresh is the caller's job (`provider_unauthorized` → refresh, call again).
//
// Least data: every output is built by picking the fields the product may see, never by deleting
// from what Google sent, so a field Google adds (or sends because a scope allowed it: profile
// e-mails, photos, grades) never leaks through. The requests also carry field masks asking Google
// for no more than that, but the picking is what guarantees it.
//
// Retry-safe assignments: courseWork.create has no request id. The caller records the intent under
// its Idempotency-Key with a marker (newCourseWorkMarker), creates, and after an ambiguous failure
// (GoogleApiError.maybeApplied) calls findCourseWorkByMarker before creating again. The marker is the
// description's last line, `[ref:<marker>]` (plain ASCII, no zero-width characters), visible to the
// teacher; if the teacher deletes that line before a reconcile, it can no longer be found.
import { randomBytes } from 'node:crypto';
import { auth, classroom } from '@googleapis/classroom';
import type { classroom_v1 } from '@googleapis/classroom';
import { GoogleApiError, GoogleInputError, googleApiError, transporterSettings } from './google-oauth.ts';
import type { GoogleAccess } from './google-oauth.ts';

export const CLASSROOM_LIMITS = {
  pageSize: 100,
  titleChars: 300,
  descriptionChars: 10_000,
  materials: 20,
  urlChars: 2048,
  attachmentsPerSubmission: 20,
  /** Reconciliation looks at this many of the course's most recently updated items. */
  reconcileItems: 200,
} as const;

export type Page = { pageToken?: string; pageSize?: number };
export type Course = { id: string; name: string; section: string | null; room: string | null; alternateLink: string | null };
export type RosterStudent = { userId: string; fullName: string };
export type CourseWorkSummary = { courseWorkId: string; title: string; state: string; alternateLink: string | null };
export type AttachmentKind = 'driveFile' | 'link' | 'youTubeVideo' | 'form';
export type SubmissionAttachment = { kind: AttachmentKind; title: string; driveFileId?: string; url?: string };
export type SubmissionAttachments = { submissionId: string; userId: string; state: string; attachments: SubmissionAttachment[] };

function client(access: GoogleAccess): classroom_v1.Classroom {
  const oauth = new auth.OAuth2({ clientId: access.settings.clientId, ...transporterSettings(access.settings) });
  oauth.setCredentials({ access_token: access.accessToken });
  return classroom({ version: 'v1', auth: oauth, rootUrl: access.settings.endpoints.classroomRootUrl, timeout: access.settings.timeoutMs, retry: false });
}

/** The teacher's active courses, one bounded page. */
export async function listActiveCourses(access: GoogleAccess, page: Page = {}): Promise<{ courses: Course[]; nextPageToken: string | null }> {
  const { pageSize, pageToken } = checkPage(page);
  try {
    const res = await client(access).courses.list({
      teacherId: 'me',
      courseStates: ['ACTIVE'],
      pageSize,
      pageToken,
      fields: 'courses(id,name,section,room,alternateLink),nextPageToken',
    });
    const courses = (res.data.courses ?? []).slice(0, pageSize).flatMap((c): Course[] =>
      c.id && c.name ? [{ id: c.id, name: bounded(c.name), section: optional(c.section), room: optional(c.room), alternateLink: optional(c.alternateLink) }] : [],
    );
    return { courses, nextPageToken: res.data.nextPageToken || null };
  } catch (error) {
    throw googleApiError(error, false);
  }
}

/** A course's students: their user id and full name only (no e-mail, photo or anything else). */
export async function listRoster(access: GoogleAccess, courseId: string, page: Page = {}): Promise<{ students: RosterStudent[]; nextPageToken: string | null }> {
  const id = checkCourseId(courseId);
  const { pageSize, pageToken } = checkPage(page);
  try {
    const res = await client(access).courses.students.list({ courseId: id, pageSize, pageToken, fields: 'students(userId,profile/name/fullName),nextPageToken' });
    const students = (res.data.students ?? []).slice(0, pageSize).flatMap((s): RosterStudent[] =>
      s.userId ? [{ userId: s.userId, fullName: bounded(s.profile?.name?.fullName ?? '') }] : [],
    );
    return { students, nextPageToken: res.data.nextPageToken || null };
  } catch (error) {
    throw googleApiError(error, false);
  }
}

/** A fresh marker for a create intent (the caller stores it with its Idempotency-Key). */
export function newCourseWorkMarker(): string {
  return randomBytes(16).toString('base64url');
}

/** The line embedded as the description's last line. */
export function markerLine(marker: string): string {
  return `[ref:${checkMarker(marker)}]`;
}

/**
 * Creates an assignment carrying the marker. On a failure with `maybeApplied`, call
 * findCourseWorkByMarker before creating again: it may exist.
 */
export async function createCourseWork(
  access: GoogleAccess,
  input: {
    courseId: string;
    title: string;
    description?: string;
    workType: 'ASSIGNMENT';
    /** Links students see with the assignment. */
    materials?: { url: string }[];
    /** YYYY-MM-DD, with dueTime (HH:MM, UTC; 23:59 when absent). */
    dueDate?: string;
    dueTime?: string;
    /** DRAFT leaves it for the teacher to post from Classroom. */
    state?: 'PUBLISHED' | 'DRAFT';
    marker: string;
  },
): Promise<CourseWorkSummary> {
  const courseId = checkCourseId(input.courseId);
  const title = checkText('title', input.title, CLASSROOM_LIMITS.titleChars, 1);
  const description = checkText('description', input.description ?? '', CLASSROOM_LIMITS.descriptionChars, 0);
  if (input.workType !== 'ASSIGNMENT') throw new GoogleInputError('workType', 'ASSIGNMENT');
  const materials = input.materials ?? [];
  if (materials.length > CLASSROOM_LIMITS.materials) throw new GoogleInputError('materials', `at most ${CLASSROOM_LIMITS.materials}`);
  for (const m of materials) {
    if (m.url.length > CLASSROOM_LIMITS.urlChars || !URL.canParse(m.url) || new URL(m.url).protocol !== 'https:') throw new GoogleInputError('materials.url', 'an https URL');
  }
  const due = input.dueDate === undefined ? {} : checkDue(input.dueDate, input.dueTime ?? '23:59');
  const requestBody: classroom_v1.Schema$CourseWork = {
    title,
    description: description === '' ? markerLine(input.marker) : `${description}\n\n${markerLine(input.marker)}`,
    workType: 'ASSIGNMENT',
    state: input.state ?? 'PUBLISHED',
    ...(materials.length > 0 ? { materials: materials.map((m) => ({ link: { url: m.url } })) } : {}),
    ...due,
  };
  try {
    const res = await client(access).courses.courseWork.create({ courseId, requestBody, fields: 'id,title,state,alternateLink' });
    return courseWorkSummary(res.data, res.status);
  } catch (error) {
    throw googleApiError(error, true);
  }
}

/** The assignment created with this marker, among the course's most recently updated ones, or null. */
export async function findCourseWorkByMarker(access: GoogleAccess, courseId: string, marker: string): Promise<CourseWorkSummary | null> {
  const id = checkCourseId(courseId);
  const line = markerLine(marker);
  const api = client(access);
  let pageToken: string | undefined;
  let seen = 0;
  try {
    do {
      const res = await api.courses.courseWork.list({
        courseId: id,
        courseWorkStates: ['PUBLISHED', 'DRAFT'],
        orderBy: 'updateTime desc',
        pageSize: CLASSROOM_LIMITS.pageSize,
        pageToken,
        fields: 'courseWork(id,title,state,alternateLink,description),nextPageToken',
      });
      const items = res.data.courseWork ?? [];
      const found = items.find((w) => (w.description ?? '').split('\n').at(-1) === line);
      if (found) return courseWorkSummary(found, res.status);
      seen += items.length;
      pageToken = res.data.nextPageToken || undefined;
    } while (pageToken && seen < CLASSROOM_LIMITS.reconcileItems);
    return null;
  } catch (error) {
    throw googleApiError(error, false);
  }
}

/** Who turned in what for an assignment: attachment metadata only, never grades. */
export async function listSubmissionAttachments(
  access: GoogleAccess,
  courseId: string,
  courseWorkId: string,
  page: Page = {},
): Promise<{ submissions: SubmissionAttachments[]; nextPageToken: string | null }> {
  const course = checkCourseId(courseId);
  const work = checkCourseId(courseWorkId, 'courseWorkId');
  const { pageSize, pageToken } = checkPage(page);
  try {
    const res = await client(access).courses.courseWork.studentSubmissions.list({
      courseId: course,
      courseWorkId: work,
      pageSize,
      pageToken,
      fields: 'studentSubmissions(id,userId,state,assignmentSubmission/attachments),nextPageToken',
    });
    const submissions = (res.data.studentSubmissions ?? []).slice(0, pageSize).flatMap((s): SubmissionAttachments[] =>
      s.id && s.userId
        ? [
            {
              submissionId: s.id,
              userId: s.userId,
              state: s.state ?? 'SUBMISSION_STATE_UNSPECIFIED',
              attachments: (s.assignmentSubmission?.attachments ?? []).slice(0, CLASSROOM_LIMITS.attachmentsPerSubmission).flatMap(pickAttachment),
            },
          ]
        : [],
    );
    return { submissions, nextPageToken: res.data.nextPageToken || null };
  } catch (error) {
    throw googleApiError(error, false);
  }
}

function pickAttachment(a: classroom_v1.Schema$Attachment): SubmissionAttachment[] {
  if (a.driveFile?.id) {
    return [{ kind: 'driveFile', title: bounded(a.driveFile.title ?? ''), driveFileId: a.driveFile.id, ...url(a.driveFile.alternateLink) }];
  }
  if (a.link?.url) return [{ kind: 'link', title: bounded(a.link.title ?? ''), ...url(a.link.url) }];
  if (a.youTubeVideo?.id) return [{ kind: 'youTubeVideo', title: bounded(a.youTubeVideo.title ?? ''), ...url(a.youTubeVideo.alternateLink) }];
  if (a.form?.formUrl) return [{ kind: 'form', title: bounded(a.form.title ?? ''), ...url(a.form.formUrl) }];
  return [];
}

function courseWorkSummary(w: classroom_v1.Schema$CourseWork, status: number): CourseWorkSummary {
  if (!w.id || typeof w.title !== 'string') throw new GoogleApiError('provider_error', status, false);
  return { courseWorkId: w.id, title: w.title, state: w.state ?? 'COURSE_WORK_STATE_UNSPECIFIED', alternateLink: optional(w.alternateLink) };
}

function url(value: string | null | undefined): { url?: string } {
  return value && value.length <= CLASSROOM_LIMITS.urlChars && /^https?:\/\//.test(value) ? { url: value } : {};
}

function optional(value: string | null | undefined): string | null {
  return value ? bounded(value) : null;
}

/** Provider text shown to the product is bounded too. */
function bounded(text: string): string {
  return [...text].slice(0, CLASSROOM_LIMITS.titleChars).join('');
}

function checkPage(page: Page): { pageSize: number; pageToken: string | undefined } {
  const pageSize = page.pageSize ?? 30;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > CLASSROOM_LIMITS.pageSize) throw new GoogleInputError('pageSize', `an integer from 1 to ${CLASSROOM_LIMITS.pageSize}`);
  if (page.pageToken !== undefined && !/^[A-Za-z0-9_=+/.-]{1,1024}$/.test(page.pageToken)) throw new GoogleInputError('pageToken', 'a page token from the previous page');
  return { pageSize, pageToken: page.pageToken };
}

function checkCourseId(id: string, field = 'courseId'): string {
  // Numeric ids, or aliases such as `d:math-7b` / `p:math-7b`.
  if (!/^[A-Za-z0-9:_-]{1,128}$/.test(id)) throw new GoogleInputError(field, 'a Classroom id');
  return id;
}

function checkMarker(marker: string): string {
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(marker)) throw new GoogleInputError('marker', '8 to 64 base64url characters');
  return marker;
}

function checkText(field: string, text: string, maxChars: number, minChars: number): string {
  const trimmed = text.trim();
  if ([...trimmed].length < minChars || [...trimmed].length > maxChars || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(trimmed)) {
    throw new GoogleInputError(field, `${minChars} to ${maxChars} characters, no control characters`);
  }
  return trimmed;
}

function checkDue(date: string, time: string): Pick<classroom_v1.Schema$CourseWork, 'dueDate' | 'dueTime'> {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{2}):(\d{2})$/.exec(time);
  if (!d || Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) throw new GoogleInputError('dueDate', 'YYYY-MM-DD');
  if (!t || Number(t[1]) > 23 || Number(t[2]) > 59) throw new GoogleInputError('dueTime', 'HH:MM (UTC)');
  return { dueDate: { year: Number(d[1]), month: Number(d[2]), day: Number(d[3]) }, dueTime: { hours: Number(t[1]), minutes: Number(t[2]) } };
}
