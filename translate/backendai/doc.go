// Package backendai is the low-level client of the Backend.AI manager API
// (manager 26.8 and later, API version v9.20250722) that the Slurm bridge
// uses to hand jobs over as batch sessions.
//
// One admin keypair is the only secret. Work for a Unix user is done by
// delegation: v1 calls carry owner_access_key (create, destroy, logs), the
// SSE stream is read as the admin (which sees every session), reads go
// through the legacy GraphQL schema at POST /admin/gql, and Request.ActAs
// sets X-BackendAI-Act-As for the few routes that honour only it.
//
// Every request is signed as the manager's auth middleware expects
// (src/ai/backend/manager/api/rest/middleware/auth.py at 26.8.1). Every
// call takes a context; reads, DELETE and GraphQL queries are retried with
// exponential backoff and jitter, and session creation is made idempotent
// by session name and tag (see CreateBatchSession).
//
// Manager errors arrive as application/problem+json and are returned as
// *APIError; the Is* predicates in errors.go classify them for the bridge,
// which maps them to Slurm error codes elsewhere.
package backendai
