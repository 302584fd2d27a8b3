export {};
// ---------------------------------------------------------------------------------------------
// Contract v1.1 additions not in docs/openapi.yaml yet.
