/*
 * oxs.h — onnxviz service: the one public header of service/.
 *
 * What main.c and the tests drive: the program's commands, the configuration parser (and
 * the store's options from it: the store itself is store/oxst.h), the server in process,
 * and a few pure helpers of the HTTP layer (query strings, ETags, the route table and the
 * OpenAPI document).  Inside service/, a file includes the headers of the parts it uses
 * instead (README: "Where things live").  Names start with oxs_ / OXS_.
 */
#ifndef OXS_H
#define OXS_H

#include "render/oxr.h"
#include "service/cli.h"      /* inspect, render, check */
#include "service/config.h"   /* oxs_config */
#include "service/diff.h"     /* diff */
#include "service/hash.h"     /* oxs_hex */
#include "service/heat_cli.h" /* overlay */
#include "service/query.h"    /* query strings, If-None-Match, preview options */
#include "service/router.h"   /* the route table, the OpenAPI document */
#include "service/serve.h"    /* serve, the server in process */
#include "service/version.h"
#include "store/oxst.h"

#endif /* OXS_H */
