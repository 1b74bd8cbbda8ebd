package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The resource's identity (Terraform 1.12 and later): the set's vhost and
// name, beside the string ID, which says the same escaped into one text.
// Both are fixed for the set's life (changing either replaces it), so
// Create, Read and Update set the identity from the state's own values,
// and an import block may name a set by either.

var _ resource.ResourceWithIdentity = &DelayQueueSetResource{}

// delayQueueSetIdentity maps the identity schema.
type delayQueueSetIdentity struct {
	VHost types.String `tfsdk:"vhost"`
	Name  types.String `tfsdk:"name"`
}

func (r *DelayQueueSetResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"vhost": identityschema.StringAttribute{OptionalForImport: true,
			Description: "The vhost the set lives in, as it is (not URL-escaped). Defaults to `" + defaultVHost + "` in an import block."},
		"name": identityschema.StringAttribute{RequiredForImport: true,
			Description: "The set's name. An import by identity tells the layout from the broker's objects, as an import by a string ID without a layout does."},
	}}
}

// setIdentity stores the identity of the set of m, when Terraform keeps
// identities (1.12 and later; identity is nil before).
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, m delaySpecModel) diag.Diagnostics {
	if identity == nil {
		return nil
	}
	vhost := m.VHost
	if vhost.IsNull() {
		vhost = types.StringValue(defaultVHost)
	}
	return identity.Set(ctx, delayQueueSetIdentity{VHost: vhost, Name: m.Name})
}

// importTarget is the set an import names: by its ID (see parseImportID),
// or by an import block's identity.
func importTarget(ctx context.Context, req resource.ImportStateRequest) (vhost, name string, layout topology.Layout, err error) {
	if req.ID != "" || req.Identity == nil {
		return parseImportID(req.ID)
	}
	var identity delayQueueSetIdentity
	if diags := req.Identity.Get(ctx, &identity); diags.HasError() {
		return "", "", "", fmt.Errorf("reading the import block's identity: %v", diags)
	}
	if identity.Name.ValueString() == "" {
		return "", "", "", fmt.Errorf("the import block's identity names no set: give its name, and its vhost unless %q", defaultVHost)
	}
	vhost = identity.VHost.ValueString()
	if identity.VHost.IsNull() {
		vhost = defaultVHost
	}
	return vhost, identity.Name.ValueString(), "", nil
}
