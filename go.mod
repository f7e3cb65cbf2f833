module github.com/docketq/docket

go 1.26
