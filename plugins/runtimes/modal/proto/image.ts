/**
 * Modal image messages (`modal.client`): the build definition, its creation and its build log stream. Field numbers are those of the official SDK's generated protobuf code
 * (`modal@0.7.2`); names are the proto names in camelCase. Only the fields verifiers-ts reads
 * or writes are declared; others are skipped on decode.
 *
 * @module
 */
import { defineMessage, field, type MessageType } from "../../../../kit/mod.ts";
import { GenericResult, GPUConfig } from "./control.ts";

/** `BaseImage`. */
export interface BaseImage {
  imageId: string;
  dockerTag: string;
}

/** `BaseImage`. */
export const BaseImage: MessageType<BaseImage> = defineMessage<BaseImage>("BaseImage", [
  field.singular("imageId", 1, "string"),
  field.singular("dockerTag", 2, "string"),
]);

/** `ImageRegistryConfig`. */
export interface ImageRegistryConfig {
  registryAuthType: number;
  secretId: string;
}

/** `ImageRegistryConfig`. */
export const ImageRegistryConfig: MessageType<ImageRegistryConfig> = defineMessage<
  ImageRegistryConfig
>("ImageRegistryConfig", [
  field.singular("registryAuthType", 1, "int32"),
  field.singular("secretId", 2, "string"),
]);

/** `ImageContextFile`. */
export interface ImageContextFile {
  filename: string;
  data: Uint8Array;
}

/** `ImageContextFile`. */
export const ImageContextFile: MessageType<ImageContextFile> = defineMessage<ImageContextFile>(
  "ImageContextFile",
  [field.singular("filename", 1, "string"), field.singular("data", 2, "bytes")],
);

/** `Image` (the build definition). */
export interface Image {
  baseImages: BaseImage[];
  dockerfileCommands: string[];
  contextFiles: ImageContextFile[];
  secretIds: string[];
  gpuConfig: GPUConfig | undefined;
  imageRegistryConfig: ImageRegistryConfig | undefined;
}

/** `Image`. */
export const Image: MessageType<Image> = defineMessage<Image>("Image", [
  field.repeated("baseImages", 5, () => BaseImage),
  field.repeated("dockerfileCommands", 6, "string"),
  field.repeated("contextFiles", 7, () => ImageContextFile),
  field.repeated("secretIds", 12, "string"),
  field.optional("gpuConfig", 16, () => GPUConfig),
  field.optional("imageRegistryConfig", 17, () => ImageRegistryConfig),
]);

/** `ImageGetOrCreateRequest`. */
export interface ImageGetOrCreateRequest {
  image: Image | undefined;
  appId: string;
  existingImageId: string;
  forceBuild: boolean;
  builderVersion: string;
  ignoreCache: boolean;
}

/** `ImageGetOrCreateRequest`. */
export const ImageGetOrCreateRequest = defineMessage<ImageGetOrCreateRequest>(
  "ImageGetOrCreateRequest",
  [
    field.optional("image", 2, () => Image),
    field.singular("appId", 4, "string"),
    field.singular("existingImageId", 5, "string"),
    field.singular("forceBuild", 7, "bool"),
    field.singular("builderVersion", 9, "string"),
    field.singular("ignoreCache", 11, "bool"),
  ],
);

/** `ImageGetOrCreateResponse`. */
export interface ImageGetOrCreateResponse {
  imageId: string;
  result: GenericResult | undefined;
}

/** `ImageGetOrCreateResponse`. */
export const ImageGetOrCreateResponse = defineMessage<ImageGetOrCreateResponse>(
  "ImageGetOrCreateResponse",
  [field.singular("imageId", 1, "string"), field.optional("result", 2, () => GenericResult)],
);

/** `ImageJoinStreamingRequest`. */
export interface ImageJoinStreamingRequest {
  imageId: string;
  timeout: number;
  lastEntryId: string;
  includeLogsForFinished: boolean;
}

/** `ImageJoinStreamingRequest`. */
export const ImageJoinStreamingRequest = defineMessage<ImageJoinStreamingRequest>(
  "ImageJoinStreamingRequest",
  [
    field.singular("imageId", 1, "string"),
    field.singular("timeout", 2, "float"),
    field.singular("lastEntryId", 3, "string"),
    field.singular("includeLogsForFinished", 4, "bool"),
  ],
);

/** `TaskLogs` (only the text is used). */
export interface TaskLogs {
  data: string;
  fileDescriptor: number;
}

/** `TaskLogs`. */
export const TaskLogs: MessageType<TaskLogs> = defineMessage<TaskLogs>("TaskLogs", [
  field.singular("data", 1, "string"),
  field.singular("fileDescriptor", 8, "int32"),
]);

/** `ImageJoinStreamingResponse`. */
export interface ImageJoinStreamingResponse {
  result: GenericResult | undefined;
  taskLogs: TaskLogs[];
  entryId: string;
  eof: boolean;
}

/** `ImageJoinStreamingResponse`. */
export const ImageJoinStreamingResponse = defineMessage<ImageJoinStreamingResponse>(
  "ImageJoinStreamingResponse",
  [
    field.optional("result", 1, () => GenericResult),
    field.repeated("taskLogs", 2, () => TaskLogs),
    field.singular("entryId", 3, "string"),
    field.singular("eof", 4, "bool"),
  ],
);
