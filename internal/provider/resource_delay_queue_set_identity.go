package provider

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

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

// importID is the resource ID: the URL-escaped vhost and the name, so that a
// vhost containing "/" (such as the default one) stays unambiguous. An "@"
// in the vhost is escaped too (%40), so that the ID never reads as the
// other form of import ID, <name>@<vhost> (see parseImportID).
func importID(vhost, name string) string {
	return strings.ReplaceAll(url.PathEscape(vhost), "@", "%40") + "/" + name
}

// importIDForms names both forms of the import ID, for errors.
const importIDForms = "<name>@<vhost>, the vhost as it is (such as delay@/ for the set \"delay\" in the vhost \"/\"), " +
	"or <url-escaped vhost>/<name>, optionally followed by /<layout> (such as %2F/delay, or %2F/nsb/" + string(topology.LayoutNServiceBus) + ")"

// parseImportID reads an import ID in either of its forms. A set name holds
// neither "@" nor "/", so the first of them in the ID tells the form:
//   - "@": <name>@<vhost>, the community RabbitMQ provider's form. The name
//     ends at the first "@"; the vhost is the rest, as it is, "@" and "/"
//     included: "delay@/" is the set "delay" in the vhost "/", "delay@team/a"
//     in "team/a", "delay@a@b" in "a@b". This form names no layout.
//   - "/", or neither: <url-escaped vhost>/<name>, or
//     <url-escaped vhost>/<name>/<layout> to name the layout of a set whose
//     objects the import cannot tell on its own (both libraries' layouts in
//     one vhost). It is the resource's ID (importID); an "@" in its vhost
//     must be escaped (%40), or the ID reads as the first form.
func parseImportID(id string) (vhost, name string, layout topology.Layout, err error) {
	at, slash := strings.Index(id, "@"), strings.Index(id, "/")
	if at >= 0 && (slash < 0 || at < slash) {
		name, vhost = id[:at], id[at+1:]
		if name == "" || vhost == "" {
			return "", "", "", fmt.Errorf("the import ID %q has no set name before its first \"@\" or no vhost after it; "+
				"an import ID is %s", id, importIDForms)
		}
		return vhost, name, "", nil
	}
	return parseEscapedImportID(id)
}

// parseEscapedImportID reads the form <url-escaped vhost>/<name>[/<layout>].
func parseEscapedImportID(id string) (vhost, name string, layout topology.Layout, err error) {
	escaped, rest, found := strings.Cut(id, "/")
	name, layoutText, withLayout := strings.Cut(rest, "/")
	if !found || escaped == "" || name == "" || (withLayout && layoutText == "") {
		return "", "", "", fmt.Errorf("the import ID %q is in neither form of import ID: %s", id, importIDForms)
	}
	vhost, err = url.PathUnescape(escaped)
	if err != nil {
		return "", "", "", fmt.Errorf("the vhost part %q of the import ID is not URL-escaped correctly (%w); an import ID is %s",
			escaped, err, importIDForms)
	}
	layout = topology.Layout(layoutText)
	if withLayout && !slices.Contains(topology.Layouts, layout) {
		return "", "", "", fmt.Errorf("the layout part %q of the import ID %q is none of %s", layoutText, id, quoted(topology.Layouts))
	}
	return vhost, name, layout, nil
}
