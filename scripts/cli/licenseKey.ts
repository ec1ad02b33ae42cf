import type { Config } from '../../core/config';
import { devLicenseKeyPair, signLicenseKey, type LicensePayload } from '../../core/license/keys';

/**
 * A license key signed with the local development key (the `license` command, tests): the API
 * accepts it while no SHIPYARD_LICENSE_PUBLIC_KEY is configured, never in production.
 */
export function mintDevLicenseKey(config: Config, payload: LicensePayload): string {
  return signLicenseKey(payload, devLicenseKeyPair(config).privateKey);
}
