/**
 * The one error of the resolver that is not a plain {@link PluginError}: the candidate
 * itself (package, version document, URL) does not exist. The loader turns it into its
 * "not found" error, which lists the built-ins of the kind asked for.
 *
 * @module
 */
import { PluginError } from "../../../kit/errors.ts";

/** The remote candidate is absent (HTTP 404/410 for the package or URL). */
export class RemoteNotFound extends PluginError {
  /** What was looked for, e.g. `npm package "@acme/x" at http://127.0.0.1:4873/`. */
  readonly target: string;
  constructor(target: string) {
    super("plugin_not_found", `not found: ${target}`);
    this.name = "RemoteNotFound";
    this.target = target;
  }
}
