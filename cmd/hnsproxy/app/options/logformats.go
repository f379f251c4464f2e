package options

// kube-proxy registers the JSON log format next to text; so does hnsproxy,
// so --logging-format=json and logging.format: json in a config file work.
import _ "k8s.io/component-base/logs/json/register"
