// Moved to src/kube/objects.ts (the install layer needs it too); kept until the imports are rewritten.
export * from '../../kube/objects.js';
