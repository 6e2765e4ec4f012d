/* shape.c — TEMPORARY: shape inference lands here; for now it infers nothing. */
#include "parser/internal.h"

oxp_code oxp__dag_infer_shapes(oxp_dag *dag, oxp_error *err)
{
	(void)dag, (void)err;
	return OXP_OK;
}
