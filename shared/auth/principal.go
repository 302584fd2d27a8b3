// Package auth verifies Supabase access tokens and says who is calling.
package auth

// The roles a verified caller may have.
const (
	RoleUser    = "authenticated"
	RoleService = "service_role"
)

// Principal is a verified caller.
type Principal struct {
	// Role is RoleUser or RoleService.
	Role string
	// UserID is the token's subject for user callers; zero for service callers.
	UserID string
	// TenantID is app_metadata.tenant_id of a user token, "" when absent or for service callers.
	TenantID string
	// Anonymous marks a user of Supabase's anonymous sign-ins (claim is_anonymous: true, or
	// is_anonymous of the Auth server's user); false for service callers, and when is_anonymous
	// is false, null or absent, which the contract reads alike: only true marks an anonymous user.
	Anonymous bool
}

// IsService reports whether the caller is a trusted server (service_role).
func (p Principal) IsService() bool { return p.Role == RoleService }
