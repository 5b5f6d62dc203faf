import { ContainerStartError } from './errors.js';
import { expandVars } from './expansion.js';
import { fieldValue, resourceFieldValue } from './fields.js';
import type { Container, KeySelector, NodeFacts, ObjectSource, Pod } from './types.js';

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function decode(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** Fetches each referenced Secret/ConfigMap once per resolution. */
function memo(source: ObjectSource): ObjectSource {
  const secrets = new Map<string, ReturnType<ObjectSource['secret']>>();
  const configMaps = new Map<string, ReturnType<ObjectSource['configMap']>>();
  return {
    secret: (ns, name) => {
      const key = `${ns}/${name}`;
      if (!secrets.has(key)) secrets.set(key, source.secret(ns, name));
      return secrets.get(key)!;
    },
    configMap: (ns, name) => {
      const key = `${ns}/${name}`;
      if (!configMaps.has(key)) configMaps.set(key, source.configMap(ns, name));
      return configMaps.get(key)!;
    },
  };
}

async function keyRef(kind: 'secret' | 'configmap', ref: KeySelector, ns: string, source: ObjectSource, varName: string): Promise<string | undefined> {
  const name = ref.name ?? '';
  if (kind === 'secret') {
    const secret = await source.secret(ns, name);
    if (!secret) {
      if (ref.optional) return undefined;
      throw new ContainerStartError('CreateContainerConfigError', `secret "${name}" not found (env ${varName})`);
    }
    const value = secret.data?.[ref.key];
    if (value === undefined) {
      if (ref.optional) return undefined;
      throw new ContainerStartError('CreateContainerConfigError', `couldn't find key ${ref.key} in Secret ${ns}/${name} (env ${varName})`);
    }
    return decode(value);
  }
  const cm = await source.configMap(ns, name);
  if (!cm) {
    if (ref.optional) return undefined;
    throw new ContainerStartError('CreateContainerConfigError', `configmap "${name}" not found (env ${varName})`);
  }
  const value = cm.data?.[ref.key] ?? (cm.binaryData?.[ref.key] !== undefined ? decode(cm.binaryData[ref.key] as string) : undefined);
  if (value === undefined) {
    if (ref.optional) return undefined;
    throw new ContainerStartError('CreateContainerConfigError', `couldn't find key ${ref.key} in ConfigMap ${ns}/${name} (env ${varName})`);
  }
  return value;
}

/**
 * A container's environment as the kubelet builds it: `base` (service-style
 * variables), then envFrom sources in order, then env entries in order, each
 * value `$(VAR)`-expanded against what was defined before it. A missing
 * non-optional Secret/ConfigMap/key is a CreateContainerConfigError.
 */
export async function resolveEnv(
  pod: Pod,
  container: Container,
  node: NodeFacts,
  source: ObjectSource,
  base: Record<string, string> = {},
): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace ?? 'default';
  const objects = memo(source);
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    let data: Record<string, string> | undefined;
    if (from.configMapRef) {
      const name = from.configMapRef.name ?? '';
      const cm = await objects.configMap(ns, name);
      if (!cm && !from.configMapRef.optional) throw new ContainerStartError('CreateContainerConfigError', `configmap "${name}" not found (envFrom)`);
      data = cm?.data;
    } else if (from.secretRef) {
      const name = from.secretRef.name ?? '';
      const secret = await objects.secret(ns, name);
      if (!secret && !from.secretRef.optional) throw new ContainerStartError('CreateContainerConfigError', `secret "${name}" not found (envFrom)`);
      data = secret?.data ? Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, decode(v)])) : undefined;
    }
    for (const [k, v] of Object.entries(data ?? {})) {
      // The kubelet skips keys that are not valid variable names (and says so in an event).
      if (ENV_NAME.test(prefix + k)) env[prefix + k] = v;
    }
  }
  for (const e of container.env ?? []) {
    let value: string | undefined;
    const from = e.valueFrom;
    if (!from) value = expandVars(e.value ?? '', (n) => env[n]);
    else if (from.fieldRef) value = fieldValue(pod, node, from.fieldRef);
    else if (from.resourceFieldRef) value = resourceFieldValue(pod.spec.containers, container.name, node, from.resourceFieldRef);
    else if (from.secretKeyRef) value = await keyRef('secret', from.secretKeyRef, ns, objects, e.name);
    else if (from.configMapKeyRef) value = await keyRef('configmap', from.configMapKeyRef, ns, objects, e.name);
    else throw new ContainerStartError('CreateContainerConfigError', `env ${e.name}: valueFrom names no source`, false);
    if (value !== undefined) env[e.name] = value;
  }
  return env;
}
