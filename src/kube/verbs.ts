/**
 * The authorization verb of an HTTP method that writes (as the API server's
 * RequestInfo and the kubelet's auth both map them); undefined for reads and
 * unknown methods, whose verb depends on what is read (get, list, watch).
 */
export function verbOfMethod(method: string | undefined): 'create' | 'update' | 'patch' | 'delete' | undefined {
  switch (method?.toUpperCase()) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return undefined;
  }
}
