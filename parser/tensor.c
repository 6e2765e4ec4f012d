/* tensor.c — TEMPORARY stub; value decoding is being written. */
#include "parser/internal.h"

oxp_code oxp_tensor_size_get(const oxp_tensor *t, oxp_tensor_size *out, oxp_error *err)
{
	(void)t, (void)out;
	return oxp__set_error(err, OXP_E_DTYPE, 0, "", "not implemented yet");
}
oxp_code oxp_tensor_read_f64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, double *out, oxp_error *err)
{
	(void)t, (void)bytes, (void)nbytes, (void)offset, (void)count, (void)out;
	return oxp__set_error(err, OXP_E_DTYPE, 0, "", "not implemented yet");
}
oxp_code oxp_tensor_read_i64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, int64_t *out, oxp_error *err)
{
	(void)t, (void)bytes, (void)nbytes, (void)offset, (void)count, (void)out;
	return oxp__set_error(err, OXP_E_DTYPE, 0, "", "not implemented yet");
}
