/**
 * Modal control-plane messages (`modal.client`) for auth, apps, secrets and results. Field numbers are those of the official SDK's generated protobuf code
 * (`modal@0.7.2`); names are the proto names in camelCase. Only the fields verifiers-ts reads
 * or writes are declared; others are skipped on decode.
 *
 * @module
 */
import { defineMessage, field, type MessageType } from "../../../../kit/mod.ts";

/** `AuthTokenGetRequest` (empty). */
export type AuthTokenGetRequest = Record<string, never>;

/** `AuthTokenGetRequest`. */
export const AuthTokenGetRequest = defineMessage<AuthTokenGetRequest>("AuthTokenGetRequest", []);

/** `AuthTokenGetResponse`. */
export interface AuthTokenGetResponse {
  token: string;
}

/** `AuthTokenGetResponse`. */
export const AuthTokenGetResponse = defineMessage<AuthTokenGetResponse>("AuthTokenGetResponse", [
  field.singular("token", 1, "string"),
]);

/** `AppGetOrCreateRequest`. */
export interface AppGetOrCreateRequest {
  appName: string;
  environmentName: string;
  objectCreationType: number;
}

/** `AppGetOrCreateRequest`. */
export const AppGetOrCreateRequest = defineMessage<AppGetOrCreateRequest>(
  "AppGetOrCreateRequest",
  [
    field.singular("appName", 1, "string"),
    field.singular("environmentName", 2, "string"),
    field.singular("objectCreationType", 3, "int32"),
  ],
);

/** `AppGetOrCreateResponse`. */
export interface AppGetOrCreateResponse {
  appId: string;
}

/** `AppGetOrCreateResponse`. */
export const AppGetOrCreateResponse = defineMessage<AppGetOrCreateResponse>(
  "AppGetOrCreateResponse",
  [field.singular("appId", 1, "string")],
);

/** `GenericResult`. */
export interface GenericResult {
  status: number;
  exception: string;
  exitcode: number;
  traceback: string;
}

/** `GenericResult`. */
export const GenericResult: MessageType<GenericResult> = defineMessage<GenericResult>(
  "GenericResult",
  [
    field.singular("status", 1, "int32"),
    field.singular("exception", 2, "string"),
    field.singular("exitcode", 3, "int32"),
    field.singular("traceback", 4, "string"),
  ],
);

/** `GPUConfig`. */
export interface GPUConfig {
  type: number;
  count: number;
  gpuType: string;
}

/** `GPUConfig`. */
export const GPUConfig: MessageType<GPUConfig> = defineMessage<GPUConfig>("GPUConfig", [
  field.singular("type", 1, "int32"),
  field.singular("count", 2, "uint32"),
  field.singular("gpuType", 4, "string"),
]);

/** `SecretGetOrCreateRequest`. */
export interface SecretGetOrCreateRequest {
  deploymentName: string;
  environmentName: string;
  objectCreationType: number;
  envDict: Record<string, string>;
  appId: string;
  requiredKeys: string[];
}

/** `SecretGetOrCreateRequest`. */
export const SecretGetOrCreateRequest = defineMessage<SecretGetOrCreateRequest>(
  "SecretGetOrCreateRequest",
  [
    field.singular("deploymentName", 1, "string"),
    field.singular("environmentName", 3, "string"),
    field.singular("objectCreationType", 4, "int32"),
    field.map("envDict", 5, "string"),
    field.singular("appId", 6, "string"),
    field.repeated("requiredKeys", 7, "string"),
  ],
);

/** `SecretGetOrCreateResponse`. */
export interface SecretGetOrCreateResponse {
  secretId: string;
}

/** `SecretGetOrCreateResponse`. */
export const SecretGetOrCreateResponse = defineMessage<SecretGetOrCreateResponse>(
  "SecretGetOrCreateResponse",
  [field.singular("secretId", 1, "string")],
);
