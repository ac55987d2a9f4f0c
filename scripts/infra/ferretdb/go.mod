module github.com/treerag/treerag/scripts/infra/ferretdb

go 1.24

require github.com/FerretDB/FerretDB v1.24.2
