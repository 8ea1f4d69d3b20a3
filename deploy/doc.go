// Package deploy holds no code: its tests check the deployment files
// beside them (the systemd unit, the Kubernetes manifests) with the tools
// that read them, so a file that would not load fails make test.
package deploy
