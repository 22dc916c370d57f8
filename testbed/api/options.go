package api

import (
	"slices"

	"github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Problems are o.Problems with a MySQLDSN the driver cannot read among
// them, at the database's place: every problem a replica started with o
// refuses, each a FieldError naming its field.
func Problems(o replica.Options) herd.FieldErrors {
	errs := o.Problems()
	at := len(errs) - len(o.Config.Problems()) - len(o.CacheProblems(o.Config))
	return slices.Insert(errs, at, dsnProblems(o)...)
}

// dsnProblems are the problem with o's MySQLDSN once o.DBProblems has
// none: one the driver cannot parse.
func dsnProblems(o replica.Options) herd.FieldErrors {
	var errs herd.FieldErrors
	if o.MySQLDSN == "" || len(o.DBProblems()) > 0 {
		return nil
	}
	if _, err := mysql.ParseDSN(o.MySQLDSN); err != nil {
		errs.Add("mysql", "%v (accepted: a go-sql-driver DSN, such as app:pw@tcp(127.0.0.1:3306)/herdbench)", err)
	}
	return errs
}
