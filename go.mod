module github.com/lablup/slurm-frontend

go 1.26

require (
	github.com/cloudflare/circl v1.6.5
	github.com/stretchr/testify v1.12.1
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
