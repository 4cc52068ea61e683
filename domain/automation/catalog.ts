// What the automation gateway tells a bridge about itself: adapters (bridges) and templates.
// Templates are versioned configuration input; downloading one grants nothing.

export type Adapter = {
  bridge: string;
  title: string;
  description: string;
  direction: 'ingest' | 'propose' | 'ingest+propose';
  eventTypes: string[];
  actionKinds: string[];
  credentials: string;
};

export const adapters: Adapter[] = [
  {
    bridge: 'graph-provider',
    title: 'Directory graph ingestion',
    description:
      'The directory-graph ingestion boundary: people, groups and memberships from an external directory arrive as automation events. ' +
      'It is separate from the service\'s native account OAuth connection.',
    direction: 'ingest',
    eventTypes: ['directory.person.upserted', 'directory.person.removed', 'directory.group.upserted', 'directory.membership.changed'],
    actionKinds: [],
    credentials: 'Never receives the native provider credential; it authenticates to us with a personal access token of a workspace member holding automation.events.ingest.',
  },
  {
    bridge: 'generic-webhook',
    title: 'Generic inbound bridge',
    description: 'Any external system that posts events and proposes bounded note actions for review.',
    direction: 'ingest+propose',
    eventTypes: ['*'],
    actionKinds: ['note.write', 'note.transaction'],
    credentials: 'A personal access token; proposing needs automation.manage, ingesting automation.events.ingest.',
  },
];

export type Template = {
  id: string;
  version: number;
  title: string;
  description: string;
  configuration: Record<string, unknown>;
};

export const templates: Template[] = [
  {
    id: 'inbox-capture',
    version: 1,
    title: 'Capture to Inbox',
    description: 'An event trigger on capture.created that proposes writing the captured text to Inbox/<date>.md for review.',
    configuration: {
      trigger: { type: 'event', eventType: 'capture.created', filter: {} },
      proposal: { bridge: 'generic-webhook', action: { kind: 'note.write', path: 'Inbox/{{date}}.md', content: '{{event.data.text}}' } },
    },
  },
  {
    id: 'weekly-review',
    version: 1,
    title: 'Weekly review note',
    description: 'A schedule trigger (Mondays 08:00 in the workspace time zone) that proposes a weekly review note.',
    configuration: {
      trigger: { type: 'schedule', cron: '0 8 * * 1', timeZone: 'UTC' },
      proposal: { bridge: 'generic-webhook', action: { kind: 'note.write', path: 'Reviews/{{isoWeek}}.md', content: '# Week {{isoWeek}}\n' } },
    },
  },
];
