// The education reference product, as data: version 1 of the `education` Vertical Intelligence
// Pack (its entities, relationships and operations, from the spec's education endpoints) and of its
// Product Experience Pack (navigation, terminology defaults, onboarding intent, surfaced
// capabilities). Changing what a product renders is a data change here, reviewed like code; a new
// major version is a new file. Nothing here is authority (packs/schema.ts).
import { packOperations } from './schema.ts';
import type { CompositionPack } from './schema.ts';

export const educationPackV1 = {
  id: 'education',
  major: 1,
  vertical: {
    id: 'education',
    version: '1.0.0',
    name: 'Education',
    entityKinds: ['course', 'unit', 'lesson', 'learning-target', 'standard', 'framework', 'source', 'artifact', 'assessment', 'rubric', 'activity'],
    semanticKinds: [
      { id: 'contains', from: 'course', to: 'unit', summary: 'A course is made of units; a unit of lessons.' },
      { id: 'aligns-to', from: 'lesson', to: 'standard', summary: 'A lesson, activity or assessment item claims alignment to an authorized standard.' },
      { id: 'targets', from: 'lesson', to: 'learning-target', summary: 'A lesson works towards reviewed learning targets.' },
      { id: 'cites', from: 'artifact', to: 'source', summary: 'An artifact draws on explicitly selected sources.' },
      { id: 'belongs-to', from: 'standard', to: 'framework', summary: 'A standard is an item of a framework (CASE identity, coding scheme).' },
      { id: 'assesses', from: 'assessment', to: 'learning-target', summary: 'An assessment or rubric gathers evidence on learning targets.' },
    ],
    // From the SDK's operation table: every operation it marks `pack: 'education'`.
    operations: packOperations('education'),
  },
  experience: {
    id: 'education-studio',
    version: '1.0.0',
    name: 'Education reference product',
    terminology: {
      'nav.home': 'Home',
      'nav.library': 'Library',
      'nav.publish': 'Publish',
      'nav.courses': 'Courses',
      'nav.standards': 'Standards',
      'nav.crosswalk': 'Crosswalk',
      'nav.recommendations': 'Recommendations',
      'nav.planning': 'Planning assistant',
      'nav.class-context': 'Class context',
      'nav.shared-memory': 'Shared memory',
      'nav.connections': 'Connected vaults',
      course: 'Course',
      courses: 'Courses',
      unit: 'Unit',
      units: 'Units',
      lesson: 'Lesson',
      lessons: 'Lessons',
      'learning-target': 'Learning target',
      'learning-targets': 'Learning targets',
      standard: 'Standard',
      standards: 'Standards',
      educator: 'Teacher',
      educators: 'Teachers',
      learner: 'Student',
      learners: 'Students',
      artifact: 'Resource',
      artifacts: 'Resources',
      assessment: 'Assessment',
      rubric: 'Rubric',
      vault: 'Curriculum vault',
    },
    navigation: [
      { id: 'home', termKey: 'nav.home', parentId: null, capability: null },
      { id: 'library', termKey: 'nav.library', parentId: null, capability: 'notes.read' },
      { id: 'library.publish', termKey: 'nav.publish', parentId: 'library', capability: 'notes.write' },
      { id: 'courses', termKey: 'nav.courses', parentId: null, capability: 'notes.read' },
      { id: 'standards', termKey: 'nav.standards', parentId: null, capability: 'intelligence.education' },
      { id: 'standards.crosswalk', termKey: 'nav.crosswalk', parentId: 'standards', capability: 'intelligence.education' },
      { id: 'recommendations', termKey: 'nav.recommendations', parentId: null, capability: 'intelligence.education' },
      { id: 'planning', termKey: 'nav.planning', parentId: null, capability: 'intelligence.generate' },
      { id: 'class-context', termKey: 'nav.class-context', parentId: null, capability: 'context-scopes' },
      { id: 'class-context.shared-memory', termKey: 'nav.shared-memory', parentId: 'class-context', capability: 'shared-memory.propose' },
      { id: 'connections', termKey: 'nav.connections', parentId: null, capability: 'vaults.bind' },
    ],
    onboarding: {
      intent: 'Connect a hosted curriculum vault, then plan and align a unit with educator review at every step.',
      steps: [
        { id: 'connect-vault', title: 'Ask a workspace admin to connect a curriculum vault', capability: 'vaults.bind' },
        { id: 'open-library', title: 'Open the curriculum library', capability: 'notes.read' },
        { id: 'align-standards', title: 'Align a unit to your adopted standards', capability: 'intelligence.education' },
        { id: 'review-shared-memory', title: 'Propose what the class context should remember', capability: 'shared-memory.propose' },
      ],
    },
    surfacedCapabilities: [
      'notes.read',
      'notes.write',
      'vaults.bind',
      'context-scopes',
      'shared-memory.propose',
      'intelligence.education',
      'intelligence.generate',
    ],
  },
} satisfies CompositionPack;
