/* graph.c — TEMPORARY stub; the linker is being written. */
#include "parser/internal.h"

oxp_code oxp_dag_build(oxp_dag **out, const oxp_model *model, const oxp_dag_options *opt,
                       oxp_error *err)
{
	(void)out, (void)model, (void)opt;
	return oxp__set_error(err, OXP_E_IO, 0, "", "dag: not implemented yet");
}
void oxp_dag_free(oxp_dag *dag)
{
	(void)dag;
}
const oxp_dag_view *oxp_dag_get(const oxp_dag *dag)
{
	(void)dag;
	return NULL;
}
const char *oxp_warning_kind_name(oxp_warning_kind k)
{
	(void)k;
	return "?";
}
