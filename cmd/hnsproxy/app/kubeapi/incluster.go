package kubeapi

import (
	"os"

	"k8s.io/client-go/rest"
)

// The in-cluster configuration and the service account token it reads;
// variables for the tests.
var (
	inClusterConfig     = rest.InClusterConfig
	serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"
)

// inClusterPossible says whether the process runs in a pod with a service
// account, as clientcmd's loading rules ask before they give way to the
// in-cluster configuration: the API server's Service in the environment
// and the token file present.
func inClusterPossible(getenv func(string) string) bool {
	fi, err := os.Stat(serviceAccountToken)
	return getenv("KUBERNETES_SERVICE_HOST") != "" && getenv("KUBERNETES_SERVICE_PORT") != "" &&
		err == nil && !fi.IsDir()
}
