package hnslb

// The names of Client's calls: the operation label values of hnsproxy's HNS
// metrics (hnsproxy_hns_operations_total, _duration_seconds and
// hnsproxy_hns_call_timeouts_total), written once so that every counter
// of one call carries the same name.
const (
	OpVersion                 = "version"
	OpOSBuild                 = "os_build"
	OpServiceInstance         = "service_instance"
	OpListNetworks            = "list_networks"
	OpGetNetwork              = "get_network"
	OpGetNetworkByName        = "get_network_by_name"
	OpCreateNetwork           = "create_network"
	OpDeleteNetwork           = "delete_network"
	OpCreateEndpoint          = "create_endpoint"
	OpGetEndpoint             = "get_endpoint"
	OpGetEndpointByName       = "get_endpoint_by_name"
	OpListEndpoints           = "list_endpoints"
	OpListEndpointsOfNetwork  = "list_endpoints_of_network"
	OpDeleteEndpoint          = "delete_endpoint"
	OpCreateNamespace         = "create_namespace"
	OpGetNamespace            = "get_namespace"
	OpListNamespaces          = "list_namespaces"
	OpDeleteNamespace         = "delete_namespace"
	OpAddNamespaceEndpoint    = "add_namespace_endpoint"
	OpRemoveNamespaceEndpoint = "remove_namespace_endpoint"
	OpCreateLoadBalancer      = "create_load_balancer"
	OpUpdateLoadBalancer      = "update_load_balancer"
	OpGetLoadBalancer         = "get_load_balancer"
	OpListLoadBalancers       = "list_load_balancers"
	OpDeleteLoadBalancer      = "delete_load_balancer"
)
