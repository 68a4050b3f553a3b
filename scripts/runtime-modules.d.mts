// Types of scripts/runtime-modules.mjs, a plain script of the build, for the tests that use it.
export declare const RUNTIME_PACKAGES: string[];
export declare function runtimeClosure(root: string, names?: string[]): string[];
export declare function copyRuntimeModules(from: string, to: string, names?: string[]): void;
