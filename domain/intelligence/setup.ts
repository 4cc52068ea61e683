// What the service is configured with for metered intelligence (platform/config.ts reads it from
// the environment), and the provider built from it. Null everywhere means "not configured":
// getCapabilities then says capability_not_configured and the operations answer `unavailable`.
import { createOpenAiProvider } from './provider.ts';
import type { IntelligenceProvider, ProviderConfig } from './provider.ts';
import type { ImageModelConfig, TextModelConfig } from './pricing.ts';

export type MeteringTiming = {
  /** An undispatched reservation is released this long after its workflow started. */
  reservationTtlMs: number;
  /** A dispatched request unreported this long after the reservation timer is a billable failure. */
  completionDeadlineMs: number;
  /** How long a finished generation's events stay readable (INTELLIGENCE_GENERATION_RETENTION_HOURS; default 24). */
  generationRetentionHours?: number;
};

export type IntelligenceSettings = {
  provider: ProviderConfig;
  text: TextModelConfig;
  /** Null: generate-image answers `unavailable` (no image model configured). */
  image: ImageModelConfig | null;
  timing: MeteringTiming;
};

/** The settings with the provider client built (one per process). */
export type Intelligence = Omit<IntelligenceSettings, 'provider'> & { provider: IntelligenceProvider };

export function createIntelligence(settings: IntelligenceSettings): Intelligence {
  return { ...settings, provider: createOpenAiProvider(settings.provider) };
}
