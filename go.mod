module github.com/tmcp/tmcp

go 1.26.8
