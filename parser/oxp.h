/*
 * oxp.h — onnxviz parser: the one public header of parser/.
 *
 * Decodes ONNX protobuf (every message and field of onnx.proto, IR versions 1..14) by hand
 * from a read-only buffer, zero-copy: names and strings are oxp_str views into the buffer,
 * weights stay where they are (a tensor records where its data lies; decoding values is a
 * separate step, see "Tensor values" below).  All structures of one model live in one arena
 * owned by the oxp_model and are freed by oxp_model_free() in one call.
 *
 * Naming: every public name starts with oxp_ / OXP_.  Functions that can fail return an
 * oxp_code (0 = OXP_OK) and fill an oxp_error when one is given; output parameters come
 * first and are written only on success.
 *
 * Lifetime: every pointer reachable from an oxp_model (views included) is valid until
 * oxp_model_free(); views into the input additionally need the input buffer to stay alive
 * (oxp_model_open() owns its mapping, oxp_model_parse() borrows the caller's buffer).
 * Structures are plain data to read; do not modify them.
 *
 * Hostile input is expected: see docs/parser-security.md for the invariants.
 */
#ifndef OXP_H
#define OXP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Errors
 */
typedef enum oxp_code {
	OXP_OK = 0,
	OXP_E_TRUNCATED,   /* input ends inside a field */
	OXP_E_VARINT,      /* varint longer than 10 bytes or above 2^64-1 */
	OXP_E_TAG,         /* field number 0 or above 2^29-1, or tag longer than 5 bytes */
	OXP_E_WIRETYPE,    /* wire type 6/7, or a known field sent with the wrong wire type */
	OXP_E_GROUP,       /* wire type 3/4: groups are rejected (no ONNX field uses them) */
	OXP_E_LENGTH,      /* a length prefix larger than the bytes that remain */
	OXP_E_PACKED,      /* packed payload is not a whole number of elements */
	OXP_E_DEPTH,       /* messages nested deeper than oxp_limits.max_depth */
	OXP_E_GRAPH_DEPTH, /* subgraphs nested deeper than oxp_limits.max_graph_depth */
	OXP_E_LIMIT,       /* a count limit (nodes, inputs of a node, ...) exceeded */
	OXP_E_NOMEM,       /* out of memory (malloc failed): the machine's, try again later */
	OXP_E_DIMS,        /* tensor dims negative, or their product overflows int64 */
	OXP_E_NOT_MODEL,   /* well-formed protobuf, but neither graph nor ir_version: not ONNX */
	OXP_E_IO,          /* file could not be opened, is not a regular file, or mmap failed */
	/* tensor value decoding (oxp_tensor_* below) */
	OXP_E_DTYPE,       /* data type unknown, or not valid for the requested operation */
	OXP_E_STORAGE,     /* stored values disagree with dims x dtype (count or byte size) */
	OXP_E_EXTERNAL,    /* tensor data is external: use the external-data functions */
	OXP_E_RANGE,       /* element offset or count outside the tensor */
	OXP_E_RECURSION,   /* model-local functions call each other recursively */
	OXP_E_BUDGET,      /* the model needs more memory than its budget allows (max_alloc, an
	                      analysis arena's): permanent, the model's own, unlike OXP_E_NOMEM */
	OXP_E__COUNT
} oxp_code;

typedef struct oxp_error {
	oxp_code code;
	uint64_t offset;   /* byte offset in the input where the problem was seen */
	char path[256];    /* field path, e.g. "graph.node[12].attribute[3].t.dims" */
	char message[256]; /* one line, English, never contains raw model bytes */
} oxp_error;

/* Stable short name of a code, e.g. "truncated"; used in JSON errors and logs. */
const char *oxp_code_name(oxp_code code);

/* Format "message at byte N in PATH" into buf (always NUL-terminated). Returns buf. */
char *oxp_error_format(const oxp_error *err, char *buf, size_t size);

/* The failure in a person's words, for the first line of what a person reads (the exact
 * message goes below it): what the file is when its first bytes say so ("this is not an
 * ONNX model: it looks like text", "... it is a PNG image"), an empty file, a file that
 * ends early with how long it is and how long it would be at least ("the file ends early:
 * 1,000 of at least 102,057,644 bytes — was the download or copy cut short?"), else the
 * kind of failure.  head: the input's first len bytes (NULL when unknown; 16 KiB tell
 * every case above), size: its whole size (UINT64_MAX when unknown).  Never speaks of the
 * encoding (tags, wire types, fields).  Writes "" when it has nothing to add (OXP_OK,
 * the codes of tensor values and checks, whose message says it); always NUL-terminated;
 * returns buf.  headline.c. */
char *oxp_error_headline(const oxp_error *err, const uint8_t *head, size_t len,
                         uint64_t size, char *buf, size_t bufsize);
/* The same for the file at path (its first 16 KiB and its size are read). */
char *oxp_error_headline_file(const oxp_error *err, const char *path, char *buf,
                              size_t bufsize);

/* ---------------------------------------------------------------------------------------
 * Counts taken from a model (parameters, bytes, elements) are summed and multiplied with
 * these: a total past 2^64-1 stays UINT64_MAX ("more than can be counted") instead of
 * wrapping to a small number, so a later sum cannot wrap either (docs/arith-audit.md).
 */
static inline uint64_t oxp_sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t oxp_sat_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* ---------------------------------------------------------------------------------------
 * Limits.  oxp_limits_default() gives the values documented in README ("Limits").
 */
typedef struct oxp_limits {
	uint32_t max_depth;        /* nested messages (protobuf's own default: 100) */
	uint32_t max_graph_depth;  /* nested subgraphs below the main graph (32) */
	size_t max_alloc;          /* bytes the model's arena may hold */
	size_t max_nodes;          /* nodes in all graphs and functions together */
	size_t max_node_io;        /* inputs or outputs of one node */
	size_t max_repeated;       /* elements of any one repeated field of one message */
} oxp_limits;

oxp_limits oxp_limits_default(void);

/* ---------------------------------------------------------------------------------------
 * Views and small messages
 */
typedef struct oxp_str {
	const char *p; /* points into the input (or the arena); NOT NUL-terminated */
	size_t len;
} oxp_str;

typedef struct oxp_entry { /* StringStringEntryProto */
	oxp_str key, value;
} oxp_entry;

typedef struct oxp_opset { /* OperatorSetIdProto */
	oxp_str domain;
	int64_t version;
} oxp_opset;

/* TensorProto.DataType */
typedef enum oxp_dtype {
	OXP_DT_UNDEFINED = 0,
	OXP_DT_FLOAT = 1,
	OXP_DT_UINT8 = 2,
	OXP_DT_INT8 = 3,
	OXP_DT_UINT16 = 4,
	OXP_DT_INT16 = 5,
	OXP_DT_INT32 = 6,
	OXP_DT_INT64 = 7,
	OXP_DT_STRING = 8,
	OXP_DT_BOOL = 9,
	OXP_DT_FLOAT16 = 10,
	OXP_DT_DOUBLE = 11,
	OXP_DT_UINT32 = 12,
	OXP_DT_UINT64 = 13,
	OXP_DT_COMPLEX64 = 14,
	OXP_DT_COMPLEX128 = 15,
	OXP_DT_BFLOAT16 = 16,
	OXP_DT_FLOAT8E4M3FN = 17,
	OXP_DT_FLOAT8E4M3FNUZ = 18,
	OXP_DT_FLOAT8E5M2 = 19,
	OXP_DT_FLOAT8E5M2FNUZ = 20,
	OXP_DT_UINT4 = 21,
	OXP_DT_INT4 = 22,
	OXP_DT_FLOAT4E2M1 = 23,
	OXP_DT_FLOAT8E8M0 = 24,
	OXP_DT_UINT2 = 25,
	OXP_DT_INT2 = 26,
	OXP_DT__COUNT
} oxp_dtype;

/* Short lower-case name ("f16", "bf16", "f8e4m3fn", "i64", ...); "?" when unknown. */
const char *oxp_dtype_short(int32_t dtype);
/* ONNX spelling ("FLOAT16", ...); "UNDEFINED" when unknown. */
const char *oxp_dtype_name(int32_t dtype);
/* Storage size in bits of one element in raw_data (4 for INT4, 2 for INT2, 0 for STRING or
 * unknown). */
unsigned oxp_dtype_bits(int32_t dtype);

/* ---------------------------------------------------------------------------------------
 * Tensors
 */
typedef enum oxp_storage {
	OXP_STORE_NONE = 0,   /* no values at all */
	OXP_STORE_RAW,        /* raw_data (little-endian, packed for sub-byte types) */
	OXP_STORE_FLOAT_DATA, /* float_data */
	OXP_STORE_INT32_DATA, /* int32_data */
	OXP_STORE_STRING_DATA,/* string_data */
	OXP_STORE_INT64_DATA, /* int64_data */
	OXP_STORE_DOUBLE_DATA,/* double_data */
	OXP_STORE_UINT64_DATA,/* uint64_data */
	OXP_STORE_EXTERNAL    /* data_location = EXTERNAL: see external_data */
} oxp_storage;

const char *oxp_storage_name(oxp_storage s); /* "raw", "float_data", ..., "external" */

typedef struct oxp_segment { /* one contiguous piece of the input holding a message */
	const uint8_t *p;
	size_t len;
} oxp_segment;

typedef struct oxp_tensor {              /* TensorProto */
	oxp_str name, doc_string;
	int32_t data_type;                   /* oxp_dtype value as stored (may be unknown) */
	size_t ndims;
	int64_t *dims;                       /* validated: each >= 0, product fits int64 */
	bool has_segment;
	int64_t segment_begin, segment_end;
	int32_t data_location;               /* 0 DEFAULT, 1 EXTERNAL */
	oxp_storage storage;                 /* where the values are (derived) */
	bool has_raw_data;
	oxp_str raw_data;                    /* view of raw_data (last occurrence wins) */
	uint32_t typed_fields;               /* bit (1 << field number) for each typed field
	                                        present: float_data 4, int32_data 5, ... */
	size_t typed_bytes;                  /* payload bytes of the typed field(s) */
	size_t nstring_data;
	oxp_str *string_data;
	size_t nexternal_data;
	oxp_entry *external_data;
	size_t nmetadata_props;
	oxp_entry *metadata_props;
	/* Where the message itself lies (more than one segment only when a singular field
	 * holding it occurred several times and protobuf's merge rule joined them).  Decoding
	 * typed fields walks these again.  After a low-RSS open of a big file these are in a
	 * compacted copy of the structure, with large string payloads (raw_data, string_data)
	 * cut: read those through their views, never from these bytes. */
	size_t nsegments;
	oxp_segment *segments;
} oxp_tensor;

typedef struct oxp_sparse_tensor { /* SparseTensorProto */
	oxp_tensor *values;  /* NULL when absent */
	oxp_tensor *indices; /* NULL when absent */
	size_t ndims;
	int64_t *dims;
} oxp_sparse_tensor;

/* ---------------------------------------------------------------------------------------
 * Types
 */
typedef enum oxp_dim_kind { OXP_DIM_UNKNOWN = 0, OXP_DIM_VALUE, OXP_DIM_PARAM } oxp_dim_kind;

typedef struct oxp_dim { /* TensorShapeProto.Dimension */
	oxp_dim_kind kind;
	int64_t value;       /* when kind == OXP_DIM_VALUE (may be negative in bad models) */
	oxp_str param;       /* when kind == OXP_DIM_PARAM */
	oxp_str denotation;
} oxp_dim;

typedef struct oxp_shape { /* TensorShapeProto */
	size_t ndims;
	oxp_dim *dims;
} oxp_shape;

typedef enum oxp_type_kind {
	OXP_TYPE_NONE = 0,
	OXP_TYPE_TENSOR,
	OXP_TYPE_SEQUENCE,
	OXP_TYPE_MAP,
	OXP_TYPE_OPTIONAL,
	OXP_TYPE_SPARSE_TENSOR,
	OXP_TYPE_OPAQUE
} oxp_type_kind;

typedef struct oxp_type { /* TypeProto */
	oxp_type_kind kind;
	oxp_str denotation;
	int32_t elem_type;        /* TENSOR, SPARSE_TENSOR: an oxp_dtype value */
	oxp_shape *shape;         /* TENSOR, SPARSE_TENSOR: NULL when the shape is unknown */
	struct oxp_type *elem;    /* SEQUENCE, OPTIONAL: element type; MAP: value type */
	int32_t key_type;         /* MAP */
	oxp_str opaque_domain;    /* OPAQUE */
	oxp_str opaque_name;      /* OPAQUE */
} oxp_type;

typedef struct oxp_value_info { /* ValueInfoProto */
	oxp_str name, doc_string;
	oxp_type *type; /* NULL when absent */
	size_t nmetadata_props;
	oxp_entry *metadata_props;
} oxp_value_info;

/* ---------------------------------------------------------------------------------------
 * Attributes, nodes, graphs, functions
 */
typedef enum oxp_attr_type { /* AttributeProto.AttributeType */
	OXP_ATTR_UNDEFINED = 0,
	OXP_ATTR_FLOAT = 1,
	OXP_ATTR_INT = 2,
	OXP_ATTR_STRING = 3,
	OXP_ATTR_TENSOR = 4,
	OXP_ATTR_GRAPH = 5,
	OXP_ATTR_FLOATS = 6,
	OXP_ATTR_INTS = 7,
	OXP_ATTR_STRINGS = 8,
	OXP_ATTR_TENSORS = 9,
	OXP_ATTR_GRAPHS = 10,
	OXP_ATTR_SPARSE_TENSOR = 11,
	OXP_ATTR_SPARSE_TENSORS = 12,
	OXP_ATTR_TYPE_PROTO = 13,
	OXP_ATTR_TYPE_PROTOS = 14
} oxp_attr_type;

const char *oxp_attr_type_name(int32_t type); /* "INT", "FLOATS", ...; "UNDEFINED" */

struct oxp_graph;

typedef struct oxp_attr { /* AttributeProto */
	oxp_str name, ref_attr_name, doc_string;
	int32_t type;        /* the type field, or inferred from the value present when the
	                        field is absent (IR version 1); see type_inferred */
	bool type_inferred;
	float f;
	int64_t i;
	oxp_str s;
	oxp_tensor *t;                   /* NULL when absent */
	struct oxp_graph *g;             /* NULL when absent */
	oxp_sparse_tensor *sparse_tensor;/* NULL when absent */
	oxp_type *tp;                    /* NULL when absent */
	size_t nfloats;
	float *floats;
	size_t nints;
	int64_t *ints;
	size_t nstrings;
	oxp_str *strings;
	size_t ntensors;
	oxp_tensor *tensors;
	size_t ngraphs;
	struct oxp_graph *graphs;
	size_t nsparse_tensors;
	oxp_sparse_tensor *sparse_tensors;
	size_t ntype_protos;
	oxp_type *type_protos;
} oxp_attr;

typedef struct oxp_int_list_entry { /* IntIntListEntryProto */
	int64_t key;
	size_t nvalue;
	int64_t *value;
} oxp_int_list_entry;

typedef struct oxp_simple_sharded_dim { /* SimpleShardedDimProto */
	oxp_dim_kind kind;
	int64_t dim_value;
	oxp_str dim_param;
	int64_t num_shards;
} oxp_simple_sharded_dim;

typedef struct oxp_sharded_dim { /* ShardedDimProto */
	int64_t axis;
	size_t nsimple_sharding;
	oxp_simple_sharded_dim *simple_sharding;
} oxp_sharded_dim;

typedef struct oxp_sharding_spec { /* ShardingSpecProto */
	oxp_str tensor_name;
	size_t ndevice;
	int64_t *device;
	size_t nindex_to_device_group_map;
	oxp_int_list_entry *index_to_device_group_map;
	size_t nsharded_dim;
	oxp_sharded_dim *sharded_dim;
} oxp_sharding_spec;

typedef struct oxp_node_device_config { /* NodeDeviceConfigurationProto */
	oxp_str configuration_id;
	size_t nsharding_spec;
	oxp_sharding_spec *sharding_spec;
	int32_t pipeline_stage;
} oxp_node_device_config;

typedef struct oxp_node { /* NodeProto */
	size_t ninputs;
	oxp_str *inputs;     /* "" = omitted optional input */
	size_t noutputs;
	oxp_str *outputs;
	oxp_str name, op_type, domain, overload, doc_string;
	size_t nattrs;
	oxp_attr *attrs;
	size_t nmetadata_props;
	oxp_entry *metadata_props;
	size_t ndevice_configurations;
	oxp_node_device_config *device_configurations;
	uint64_t offset;     /* byte offset of the NodeProto in the input */
} oxp_node;

typedef struct oxp_tensor_annotation { /* TensorAnnotation */
	oxp_str tensor_name;
	size_t nquant_parameter_tensor_names;
	oxp_entry *quant_parameter_tensor_names;
} oxp_tensor_annotation;

typedef struct oxp_graph { /* GraphProto */
	size_t nnodes;
	oxp_node *nodes;
	oxp_str name, doc_string;
	size_t ninitializers;
	oxp_tensor *initializers;
	size_t nsparse_initializers;
	oxp_sparse_tensor *sparse_initializers;
	size_t ninputs;
	oxp_value_info *inputs;
	size_t noutputs;
	oxp_value_info *outputs;
	size_t nvalue_info;
	oxp_value_info *value_info;
	size_t nquantization_annotation;
	oxp_tensor_annotation *quantization_annotation;
	size_t nmetadata_props;
	oxp_entry *metadata_props;
} oxp_graph;

typedef struct oxp_training_info { /* TrainingInfoProto */
	oxp_graph *initialization; /* NULL when absent */
	oxp_graph *algorithm;      /* NULL when absent */
	size_t ninitialization_binding;
	oxp_entry *initialization_binding;
	size_t nupdate_binding;
	oxp_entry *update_binding;
} oxp_training_info;

typedef struct oxp_function { /* FunctionProto */
	oxp_str name;
	size_t ninputs;
	oxp_str *inputs;
	size_t noutputs;
	oxp_str *outputs;
	size_t nattribute;
	oxp_str *attribute;          /* attribute names without defaults */
	size_t nattribute_proto;
	oxp_attr *attribute_proto;   /* attributes with defaults */
	size_t nnodes;
	oxp_node *nodes;
	oxp_str doc_string;
	size_t nopset_import;
	oxp_opset *opset_import;
	oxp_str domain, overload;
	size_t nvalue_info;
	oxp_value_info *value_info;
	size_t nmetadata_props;
	oxp_entry *metadata_props;
} oxp_function;

typedef struct oxp_device_config { /* DeviceConfigurationProto */
	oxp_str name;
	int32_t num_devices;
	size_t ndevice;
	oxp_str *device;
} oxp_device_config;

typedef struct oxp_model_proto { /* ModelProto */
	int64_t ir_version;
	size_t nopset_import;
	oxp_opset *opset_import;
	oxp_str producer_name, producer_version, domain;
	int64_t model_version;
	oxp_str doc_string;
	oxp_graph *graph; /* NULL when absent */
	size_t nmetadata_props;
	oxp_entry *metadata_props;
	size_t ntraining_info;
	oxp_training_info *training_info;
	size_t nfunctions;
	oxp_function *functions;
	size_t nconfiguration;
	oxp_device_config *configuration;
} oxp_model_proto;

/* ---------------------------------------------------------------------------------------
 * Parsing
 */
typedef struct oxp_model oxp_model; /* opaque: the arena, the input, the decoded proto */

/* Parse a ModelProto from buf[0..len).  The buffer is borrowed: it must outlive the model
 * and must not change.  limits may be NULL (defaults).  On failure returns the code, fills
 * *err when err is not NULL, and leaves *out untouched. */
oxp_code oxp_model_parse(oxp_model **out, const void *buf, size_t len,
                         const oxp_limits *limits, oxp_error *err);

/* Open and mmap a file read-only (regular files only) and parse it; the model owns the
 * mapping.  Zero-copy: the fastest way to a parsed model. */
oxp_code oxp_model_open(oxp_model **out, const char *path, const oxp_limits *limits,
                        oxp_error *err);

/* oxp_model_open with flags:
 * OXP_OPEN_LOW_RSS: for files of 16 MB and more, the pages that hold structure are copied
 *   into anonymous memory and only the insides of big payloads (weights) stay mapped from
 *   the file.  On kernels that map whole page-cache folios (up to 2 MB) when one page of a
 *   warm file is touched, a plain mapping of an 88 MB model shows 50-70 MB RSS after a
 *   parse that only read tensor headers; this keeps it to what parsing needs (a few MB)
 *   for about 0.6 ms more on that model.  The buffer is the file byte for byte either way.
 *   The CLI and the service open models this way. */
enum { OXP_OPEN_LOW_RSS = 1u };
oxp_code oxp_model_open_ex(oxp_model **out, const char *path, const oxp_limits *limits,
                           unsigned flags, oxp_error *err);

/* Free the model, its arena and (for oxp_model_open) the mapping.  NULL is a no-op. */
void oxp_model_free(oxp_model *model);

const oxp_model_proto *oxp_model_proto_get(const oxp_model *model);
const uint8_t *oxp_model_data(const oxp_model *model); /* the input buffer */
size_t oxp_model_size(const oxp_model *model);
size_t oxp_model_arena_bytes(const oxp_model *model); /* bytes the arena holds */

/* Byte offset in the model's file of p, a pointer into the input or into any view the
 * model gave (a low-RSS open decodes a compacted copy of the structure). */
uint64_t oxp_model_offset(const oxp_model *model, const void *p);

/* Parse a lone TensorProto (e.g. onnx's test-data input_0.pb) from buf; the result lives in
 * a model-like container freed with oxp_model_free().  oxp_model_tensor_get() returns it
 * (NULL for models parsed with oxp_model_parse). */
oxp_code oxp_tensor_file_parse(oxp_model **out, const void *buf, size_t len,
                               const oxp_limits *limits, oxp_error *err);
const oxp_tensor *oxp_model_tensor_get(const oxp_model *model);

/* ---------------------------------------------------------------------------------------
 * Tensor values (parser/tensor.c, parser/dtype.c, parser/external.c): decoded on demand,
 * never at parse time.  docs/tensors.md describes the rules in full.
 *
 * The readers below take a tensor whose values are in the model (raw_data or a typed
 * field).  For external data, the caller maps or reads the bytes of the external region
 * (after oxp_external_open() below) and passes them as `bytes`; for inline tensors pass
 * bytes = NULL (bytes given for an inline tensor, or none for an external one, is
 * OXP_E_EXTERNAL).  Element offsets/counts are in elements; sub-byte types (INT4, UINT4,
 * INT2, UINT2, FLOAT4E2M1) are packed low bits first.
 *
 * Every reader first checks that the storage matches dims x dtype exactly (see
 * oxp_tensor_size_get): a mismatch is OXP_E_STORAGE and nothing is read.  [offset,
 * offset+count) outside the tensor is OXP_E_RANGE.  An unknown or UNDEFINED data_type is
 * OXP_E_DTYPE.  Readers are pure functions of the tensor and the bytes: they allocate
 * nothing (except oxp_tensor_stats_get, see there) and may run concurrently.
 * `*err` is cleared on entry and filled on failure when err is not NULL.
 */

/* Elements the dims promise, and the elements / bytes actually stored.
 *   raw_data:    stored_bytes = its length; stored_count = stored_bytes * 8 / bits (for
 *                packed sub-byte types this counts the unused slots of the last byte).
 *   typed field: the field's occurrences are walked (packed and unpacked, in order);
 *                stored_count = values held (two per complex element, two INT4/UINT4/
 *                FLOAT4 or four INT2/UINT2 per int32_data value, counted as elements);
 *                stored_bytes = payload bytes of the field.
 *   string_data: stored_count = number of strings, stored_bytes = their total length.
 *   external:    stored_bytes = external_data "length" (or what dims x dtype need when it
 *                is absent), stored_count derived from it; the external_data entries are
 *                checked with oxp_external_parse() (its errors are returned).
 * Fails with OXP_E_STORAGE (message with both numbers) when the stored values do not match
 * dims x dtype exactly: raw bytes != ceil(count * bits / 8), typed values != count (x2 for
 * complex, /2 or /4 rounded up for packed sub-byte types), strings != count, values stored
 * in a field the data type may not use, or in two places at once (raw_data and a typed
 * field); a tensor with no values at all is only valid when count is 0. */
typedef struct oxp_tensor_size {
	uint64_t count;        /* product of dims */
	uint64_t stored_count; /* elements present in storage */
	uint64_t stored_bytes; /* bytes of the stored payload */
} oxp_tensor_size;

oxp_code oxp_tensor_size_get(const oxp_tensor *t, oxp_tensor_size *out, oxp_error *err);

/* Decode elements [offset, offset+count) as double (integers converted, complex: real
 * part only, bool 0/1).  STRING fails with OXP_E_DTYPE.  Every floating type converts
 * exactly (FLOAT16, BFLOAT16, FLOAT8*, FLOAT4E2M1 and FLOAT are all subsets of double);
 * INT64/UINT64 beyond 2^53 are rounded (use oxp_tensor_read_i64/_u64 for exact values);
 * NaN payloads are not guaranteed here (oxp_tensor_read_bits gives the stored bits). */
oxp_code oxp_tensor_read_f64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, double *out, oxp_error *err);

/* Decode integer (or bool) elements exactly as int64 (UINT64 above INT64_MAX fails with
 * OXP_E_RANGE).  Floating and string types fail with OXP_E_DTYPE. */
oxp_code oxp_tensor_read_i64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, int64_t *out, oxp_error *err);

/* Decode integer (or bool) elements exactly as uint64 (a negative value of a signed type
 * fails with OXP_E_RANGE).  Floating and string types fail with OXP_E_DTYPE. */
oxp_code oxp_tensor_read_u64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, uint64_t *out, oxp_error *err);

/* The stored bit pattern of each element, zero-extended, in the element's own format:
 * FLOAT16 0x3c00 for 1.0, INT8 -1 as 0xff, INT4 -1 as 0xf, FLOAT 1.0 as 0x3f800000, BOOL
 * 0 or 1 (any non-zero byte or int32_data value reads as 1).  Typed fields give the bits
 * raw_data would hold (int32_data -1 of an INT8 tensor: 0xff).  Complex types give two
 * patterns per element (real, imaginary): out holds 2 * count entries.  STRING fails with
 * OXP_E_DTYPE.  This is the exact view (NaN payloads included). */
oxp_code oxp_tensor_read_bits(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                              uint64_t offset, size_t count, uint64_t *out, oxp_error *err);

/* String elements as views into the model input (valid as long as the model).  Only for
 * STRING tensors (their values are always inline); other types fail with OXP_E_DTYPE. */
oxp_code oxp_tensor_read_str(const oxp_tensor *t, uint64_t offset, size_t count,
                             oxp_str *out, oxp_error *err);

/* What a data type's values are, for printing them (e.g. as JSON) exactly. */
typedef enum oxp_value_class {
	OXP_VC_NONE = 0, /* UNDEFINED or unknown data type */
	OXP_VC_FLOAT,    /* FLOAT, DOUBLE, FLOAT16, BFLOAT16, FLOAT8*, FLOAT4E2M1: v.f */
	OXP_VC_INT,      /* INT2, INT4, INT8, INT16, INT32, INT64: v.i (exact) */
	OXP_VC_UINT,     /* UINT2, UINT4, UINT8, UINT16, UINT32, UINT64: v.u (exact) */
	OXP_VC_BOOL,     /* BOOL: v.b */
	OXP_VC_COMPLEX,  /* COMPLEX64, COMPLEX128: v.c[0] real, v.c[1] imaginary */
	OXP_VC_STRING    /* STRING: v.s, a view into the model input */
} oxp_value_class;

oxp_value_class oxp_dtype_class(int32_t dtype);
const char *oxp_value_class_name(oxp_value_class c); /* "float", "int", ..., "none" */

/* Significant decimal digits that identify every finite value of a floating (or complex)
 * type uniquely ("%.*g" with this many digits reads back to the same value of that type):
 * FLOAT16 5, BFLOAT16 4, FLOAT 9, DOUBLE 17, FLOAT8E4M3* 3, FLOAT8E5M2* 2, FLOAT8E8M0 2,
 * FLOAT4E2M1 2, COMPLEX64 9, COMPLEX128 17; 0 for other types.  Every such value is a
 * double exactly, so "%.17g" is always exact; this gives the short form. */
unsigned oxp_dtype_digits(int32_t dtype);

/* One element for printing.  cls is the tensor's oxp_dtype_class(); NaN and infinities
 * stay as such in v.f / v.c (JSON has no NaN: the printer decides how to spell them). */
typedef struct oxp_scalar {
	oxp_value_class cls;
	union {
		double f;
		int64_t i;
		uint64_t u;
		bool b;
		double c[2];
		oxp_str s;
	} v;
} oxp_scalar;

/* Decode elements [offset, offset+count) of any data type into out[count] (STRING
 * included, as views; bytes must then be NULL). */
oxp_code oxp_tensor_read(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                         uint64_t offset, size_t count, oxp_scalar *out, oxp_error *err);

/* Statistics over the WHOLE tensor, streamed without allocating anything of the tensor's
 * size.
 *   FLOAT16, BFLOAT16, 8-bit and sub-byte types (and INT16/UINT16): one pass counts how
 *   often each bit pattern occurs (tables of 2^bits counters, up to 2.5 MiB for 16-bit
 *   types, malloc'd and freed here; OXP_E_NOMEM when that fails), then every figure is
 *   computed from that table: exact, deterministic, independent of the element order.
 *   FLOAT, DOUBLE, 32/64-bit integers, complex: two streaming passes in chunks (min, max,
 *   counts and sums, then the sum of squared deviations and the histogram).
 * Figures are over the finite elements (NaN and +-Inf are only counted); complex elements
 * count by their magnitude |z| (NaN when a part is NaN, Inf when a part is Inf and none is
 * NaN); bool counts as 0/1.  Mean and std (population, divisor = finite) are doubles;
 * integer types also give exact min/max (imin/imax for signed types and bool, umin/umax
 * for unsigned types and bool) and the mean from an exact 128-bit sum.
 * Histogram: opt->nbins equal-width bins over [lo, hi] = [min, max] of the finite values
 * (or opt->lo/hi when opt->has_range; finite values outside go to below/above), each bin
 * half-open [a, b) except the last, closed [a, hi]; the bin of v is
 * floor((v - lo) / (hi - lo) * nbins) (hi reaching the last bin).  When lo == hi (all
 * finite values equal) the range becomes [lo - 0.5, hi + 0.5] as numpy does.  opt may be
 * NULL (no histogram); opt->bins must hold opt->nbins counters and is written only on
 * success.  nbins above OXP_STATS_MAX_BINS, or a given range that is not finite or has
 * hi <= lo, is OXP_E_RANGE.  STRING fails with OXP_E_DTYPE. */
#define OXP_STATS_MAX_BINS 65536

typedef struct oxp_stats_options {
	size_t nbins;       /* 0: no histogram */
	uint64_t *bins;     /* nbins counters, written on success */
	bool has_range;     /* histogram over [lo, hi] instead of [min, max] */
	double lo, hi;
} oxp_stats_options;

typedef struct oxp_tensor_stats {
	uint64_t count;          /* elements (product of dims) */
	uint64_t finite;         /* elements that are finite numbers */
	uint64_t nan, pos_inf, neg_inf;
	uint64_t zeros;          /* elements equal to 0 (+0 and -0 both) */
	double min, max;         /* over finite elements; NaN when finite == 0 */
	double mean, std;        /* over finite elements; NaN when finite == 0 */
	bool is_int;             /* integer or bool type: the exact fields below are set */
	int64_t imin, imax;      /* signed integer types and bool */
	uint64_t umin, umax;     /* unsigned integer types and bool */
	double lo, hi;           /* the histogram's range (NaN when no finite value) */
	uint64_t below, above;   /* finite elements outside [lo, hi] (with has_range) */
} oxp_tensor_stats;

oxp_code oxp_tensor_stats_get(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                              const oxp_stats_options *opt, oxp_tensor_stats *out,
                              oxp_error *err);

/* Scalar conversions (parser/dtype.c), exact: every value of these formats is a float.
 * NaN payloads are kept: the mantissa bits move to the top of the float's mantissa as they
 * are (the quiet bit is not forced) and the sign is kept.  FLOAT8E4M3FN has no Inf (S.1111.
 * 111 is NaN); the FNUZ types have one NaN, 0x80, and no -0; FLOAT8E8M0 is 2^(e-127) with
 * 0xff NaN; FLOAT4E2M1 (low 4 bits of v) has no Inf nor NaN.  NaN of formats without a
 * payload field (FNUZ, E8M0) widen to the float quiet NaN 0x7fc00000; E4M3FN's NaN keeps
 * its sign and mantissa (0x7ff00000 / 0xfff00000). */
/* Statistics by bit pattern.  For types whose elements have at most 16 bits (FLOAT16,
 * BFLOAT16, FLOAT8*, FLOAT4E2M1, the 2..16-bit integers, BOOL) the statistics are a
 * function of how often each bit pattern occurs, so a huge tensor can be counted piece by
 * piece (e.g. windows of external data, each described by its own oxp_tensor) and the
 * statistics computed once, exactly as oxp_tensor_stats_get() would.
 * oxp_dtype_pattern_bits: bits of one element, 0 when the type is not counted this way. */
unsigned oxp_dtype_pattern_bits(int32_t dtype);
/* Add the pattern counts of t's elements into cnt[1 << oxp_dtype_pattern_bits()]. */
oxp_code oxp_tensor_count_patterns(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                                   uint64_t *cnt, oxp_error *err);
/* Statistics (and histogram, per opt) of the elements counted in cnt. */
oxp_code oxp_stats_from_patterns(int32_t dtype, const uint64_t *cnt,
                                 const oxp_stats_options *opt, oxp_tensor_stats *out,
                                 oxp_error *err);

uint32_t oxp_f16_to_f32_bits(uint16_t h);
uint32_t oxp_bf16_to_f32_bits(uint16_t h);
/* dtype: FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0 or
 * FLOAT4E2M1; any other gives 0x7fc00000. */
uint32_t oxp_f8_to_f32_bits(int32_t dtype, uint8_t v);
/* One element's bit pattern (as oxp_tensor_read_bits gives it; for complex types one
 * part) as double: exact for every floating and bool type and integers up to 2^53
 * (larger 64-bit ones round).  Unknown types and STRING give NaN. */
double oxp_bits_to_f64(int32_t dtype, uint64_t bits);

/* ---------------------------------------------------------------------------------------
 * Opening beneath a directory (parser/beneath.c): the one confinement every untrusted
 * path goes through (external data, --models-dir files, data folders of the stores).
 *
 * oxp_open_beneath opens path[0..len) relative to dirfd (a directory the caller opened;
 * not closed here) with open(2)'s oflags plus O_NOFOLLOW|O_CLOEXEC (O_CREAT: mode 0600),
 * never leaving dirfd and never through a symbolic link: openat2() with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or, when the kernel has none (or flags say
 * so), component by component with O_NOFOLLOW, folders O_DIRECTORY and fstat-checked.
 * "" and "." components stay where they are; a trailing "/" wants a folder.  Returns 0 and
 * *out (the new fd, the caller's to close), or an errno value (*out untouched):
 *   EXDEV        absolute path or a ".." component (refused on the text, always), or an
 *                escape the kernel saw;
 *   ELOOP        a component is a symbolic link or a /proc magic link (O_PATH: the last
 *                one too);
 *   ENOTDIR      a folder component is not a folder (or "file/");
 *   ENOENT       no such file, or path empty;  EINVAL  a NUL inside path[0..len);
 *   ENAMETOOLONG len > OXP_BENEATH_MAX or a component over NAME_MAX;
 *   EEXIST       O_CREAT|O_EXCL and the name exists (a symbolic link included);
 *   others       as open(2) says.
 * What is opened is not checked further: callers that want a regular file with one link
 * fstat it. */
#define OXP_BENEATH_MAX 4095
#define OXP_BENEATH_NO_OPENAT2 1u /* the component walk even when openat2 exists (tests) */
#define OXP_BENEATH_MKDIRS 2u     /* make missing folders on the way (0700); walks */
int oxp_open_beneath(int *out, int dirfd, const char *path, size_t len, int oflags,
                     unsigned flags);

/* ---------------------------------------------------------------------------------------
 * External data (parser/external.c).  external_data entries are untrusted: the location
 * must be a plain relative path (no "..", no absolute or drive path, no backslash, no
 * NUL) and is opened beneath a directory the caller gives, without following any symbolic
 * link, and only when it is a regular file with one link; the keys are exactly location
 * (required), offset, length, checksum, each at most once; offset and length are decimal
 * integers (digits only) that fit int64; offset + length must lie within the file and
 * length must equal what dims x dtype need.  Each refusal has its own rule below (a stable
 * sub-code next to the oxp_code) and a message naming it.
 *
 * Use: oxp_external_open(&f, dirfd, t, 0, &rule, &err) -> oxp_external_map(&m, &f, &err)
 * (or pread f.length bytes at f.offset) -> oxp_tensor_read_*(t, m.bytes, m.nbytes, ...)
 * -> oxp_external_unmap(&m), oxp_external_close(&f).
 */
typedef enum oxp_ext_rule {
	OXP_EXT_OK = 0,
	OXP_EXT_NOT_EXTERNAL,   /* data_location is not EXTERNAL (OXP_E_STORAGE) */
	OXP_EXT_INLINE_DATA,    /* external tensor also holds values inline (OXP_E_STORAGE) */
	OXP_EXT_DTYPE,          /* STRING, UNDEFINED or unknown data type (OXP_E_DTYPE) */
	OXP_EXT_UNKNOWN_KEY,    /* key other than location/offset/length/checksum */
	OXP_EXT_DUPLICATE_KEY,  /* a key given twice */
	OXP_EXT_NO_LOCATION,    /* no location entry */
	OXP_EXT_EMPTY_LOCATION, /* location "" (or only "/" and "." components) */
	OXP_EXT_NUL,            /* NUL byte in the location */
	OXP_EXT_BACKSLASH,      /* backslash in the location (Windows separators, \\server) */
	OXP_EXT_ABSOLUTE,       /* location starts with "/" */
	OXP_EXT_DRIVE,          /* location starts with a drive, "C:" */
	OXP_EXT_DOTDOT,         /* a ".." component */
	OXP_EXT_TOO_LONG,       /* location longer than 4095 bytes */
	OXP_EXT_BAD_NUMBER,     /* offset/length empty or not only decimal digits */
	OXP_EXT_NUMBER_RANGE,   /* offset/length above 2^63-1, or offset + length overflows */
	OXP_EXT_LENGTH,         /* length != bytes dims x dtype need (OXP_E_STORAGE) */
	OXP_EXT_SYMLINK,        /* a component is a symbolic link */
	OXP_EXT_ESCAPE,         /* the path would leave the directory */
	OXP_EXT_NOT_FOUND,      /* no such file or directory (OXP_E_IO) */
	OXP_EXT_NOT_REGULAR,    /* not a regular file, or a component is not a directory */
	OXP_EXT_HARDLINK,       /* the file has more than one link */
	OXP_EXT_PAST_EOF,       /* offset + length beyond the end of the file (OXP_E_RANGE) */
	OXP_EXT_IO,             /* open/fstat/mmap failed otherwise (OXP_E_IO) */
	OXP_EXT__COUNT
} oxp_ext_rule;

/* Stable short name of a rule ("dotdot", "symlink", ...), "unknown" when out of range. */
const char *oxp_ext_rule_name(oxp_ext_rule rule);

typedef struct oxp_external {
	oxp_str location;   /* the checked relative path, a view into the model input */
	uint64_t offset;    /* 0 when absent */
	uint64_t length;    /* "length", or what dims x dtype need when absent */
	bool has_length;
	oxp_str checksum;   /* as given (not verified); len 0 when absent */
} oxp_external;

/* Check a tensor's external_data entries and the location's form (no file is touched).
 * On failure returns the code (OXP_E_EXTERNAL unless the rule says otherwise), sets *rule
 * (when not NULL) to the rule violated and fills err; *out is written only on success
 * (*rule is then OXP_EXT_OK). */
oxp_code oxp_external_parse(const oxp_tensor *t, oxp_external *out, oxp_ext_rule *rule,
                            oxp_error *err);

#define OXP_EXT_NO_OPENAT2 1u /* flag: use the portable component walk even when openat2
                                 exists (both refuse the same things; for tests) */

typedef struct oxp_external_file {
	int fd;             /* read-only, close-on-exec; owned: oxp_external_close() */
	uint64_t offset;    /* the region to read: length bytes at offset (within the file) */
	uint64_t length;
	uint64_t file_size;
} oxp_external_file;

/* oxp_external_parse(t), then open the location beneath dirfd (a directory the caller
 * opened, e.g. with O_PATH|O_DIRECTORY; not closed here): openat2() with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or, when the kernel has no openat2 (or
 * flags has OXP_EXT_NO_OPENAT2), component by component with O_NOFOLLOW (O_DIRECTORY for
 * directories) and fstat checks.  Then requires a regular file with st_nlink == 1 and
 * offset + length <= its size.  Nothing is read.  On success *out owns an open fd. */
oxp_code oxp_external_open(oxp_external_file *out, int dirfd, const oxp_tensor *t,
                           unsigned flags, oxp_ext_rule *rule, oxp_error *err);
/* Close f's fd (when >= 0) and set it to -1.  NULL is a no-op. */
void oxp_external_close(oxp_external_file *f);

typedef struct oxp_external_region {
	const uint8_t *bytes; /* the region: pass bytes/nbytes to the readers */
	size_t nbytes;
	void *base;           /* the mapping (page-aligned below bytes), NULL when empty */
	size_t base_len;
} oxp_external_region;

/* Map f's region read-only (MAP_PRIVATE).  The mapping stays valid after
 * oxp_external_close(f); free it with oxp_external_unmap().  A file truncated by someone
 * else while mapped raises SIGBUS on access: map only files nobody writes (or pread).
 * Fails with OXP_E_IO (rule OXP_EXT_IO) when mmap fails or the region exceeds SIZE_MAX. */
oxp_code oxp_external_map(oxp_external_region *out, const oxp_external_file *f,
                          oxp_error *err);
void oxp_external_unmap(oxp_external_region *m); /* NULL or an empty map: no-op */

/* ---------------------------------------------------------------------------------------
 * The linked graph (parser/graph.c): nodes linked by value names into a DAG per scope.
 *
 * A scope is one graph: the main graph, a subgraph held by a GRAPH/GRAPHS attribute (If,
 * Loop, Scan, ...), a model-local function body, or a training-info graph.  Every node,
 * value and edge of every scope sits in one flat array of the oxp_dag; indices into those
 * arrays are uint32_t, OXP_NONE meaning "none".  Stable ids do not depend on names:
 *   main graph node 12:                 "n12"
 *   node 3 of n12's then_branch graph:  "n12.then_branch.n3"
 *   node 3 of n12's 2nd GRAPHS element: "n12.branches.1.n3"
 *   node 5 of local function 2:         "f2.n5"
 *   node 0 of training_info[1].algorithm: "t1.algorithm.n0"
 * An attribute name that is not [A-Za-z_][A-Za-z0-9_]* is replaced by "a<index>".
 * Lifetime: the dag borrows the model; free the dag before the model.
 */
#define OXP_NONE UINT32_MAX

typedef enum oxp_scope_kind {
	OXP_SCOPE_MAIN = 0,
	OXP_SCOPE_SUBGRAPH,
	OXP_SCOPE_FUNCTION,
	OXP_SCOPE_TRAINING
} oxp_scope_kind;

typedef struct oxp_scope {
	const char *id;          /* "" main, "n12.then_branch", "f2", "t1.algorithm" */
	oxp_scope_kind kind;
	const oxp_graph *graph;  /* NULL for functions */
	const oxp_function *function; /* functions only */
	uint32_t parent;         /* enclosing scope (subgraphs), else OXP_NONE */
	uint32_t owner;          /* node holding this subgraph, else OXP_NONE */
	const char *attr;        /* attribute name holding it (subgraphs), else NULL */
	uint32_t depth;          /* 0 for top-level scopes, +1 per subgraph level */
	uint32_t first_node, nnodes;   /* the scope's nodes: dag nodes [first, first+n) */
	uint32_t first_value, nvalues; /* the scope's values */
	uint32_t ninputs, noutputs;
	uint32_t *inputs;        /* graph inputs, as value indices (OXP_NONE: unresolved) */
	uint32_t *outputs;       /* graph outputs, as value indices (OXP_NONE: never produced) */
} oxp_scope;

typedef enum oxp_value_kind {
	OXP_VALUE_UNDEFINED = 0, /* used but produced nowhere (dangling) */
	OXP_VALUE_INPUT,         /* a graph input that is not an initializer */
	OXP_VALUE_INITIALIZER,
	OXP_VALUE_SPARSE_INITIALIZER,
	OXP_VALUE_NODE_OUTPUT
} oxp_value_kind;

typedef enum oxp_shape_source {
	OXP_SHAPE_NONE = 0,   /* nothing known */
	OXP_SHAPE_DECLARED,   /* from value_info, graph inputs/outputs */
	OXP_SHAPE_INITIALIZER,/* from an initializer's dtype and dims */
	OXP_SHAPE_INFERRED    /* from shape inference (parser/shape.c) */
} oxp_shape_source;

typedef struct oxp_value_type { /* a tensor type as known for one value */
	oxp_shape_source source;
	int32_t elem_type;  /* 0 unknown */
	int32_t rank;       /* -1 unknown */
	oxp_dim *dims;      /* rank entries; a dim may be OXP_DIM_UNKNOWN */
} oxp_value_type;

typedef struct oxp_value {
	oxp_str name;
	uint32_t scope;
	oxp_value_kind kind;
	uint32_t producer;         /* node index for NODE_OUTPUT, else OXP_NONE */
	uint32_t producer_output;  /* output position on that node */
	const oxp_tensor *initializer;          /* INITIALIZER (also an input if listed) */
	const oxp_sparse_tensor *sparse_initializer;
	const oxp_value_info *info;  /* declared info (input, output or value_info), or NULL */
	bool graph_input, graph_output;
	oxp_value_type declared;     /* from info or initializer */
	oxp_value_type inferred;     /* from shape inference; declared wins when both exist */
	uint32_t nconsumers;
	uint32_t *consumers;         /* edge indices, in node order */
	/* What the value counts as parameters (parser/params.c, docs/cost.md "Parameters";
	 * set by oxp_dag_build): a constant tensor (oxp_value_constant) holds its logical
	 * values — a 4-bit MatMulNBits weight stored as uint8 [N, blocks, blob] holds K x N —
	 * except a scale or zero point of a quantized op, which holds none (its bytes are
	 * counted apart).  Other values hold none. */
	uint64_t params;
	uint8_t param_role;          /* oxp_param_role */
} oxp_value;

typedef enum oxp_param_role {
	OXP_PARAM_NONE = 0,          /* not a constant tensor */
	OXP_PARAM_PLAIN,             /* a constant counted as stored (its elements) */
	OXP_PARAM_QUANTIZED,         /* quantized values: counted as their logical elements */
	OXP_PARAM_SCALE              /* a scale or zero point of a quantized op: no parameters */
} oxp_param_role;

typedef struct oxp_edge {
	uint32_t value;      /* value carried (may belong to an enclosing scope) */
	uint32_t src;        /* producer node, or OXP_NONE for inputs/initializers/undefined */
	uint32_t src_output;
	uint32_t dst;        /* consumer node */
	uint32_t dst_input;  /* input position on the consumer */
	bool outer;          /* value from an enclosing scope (dst is inside a subgraph) */
} oxp_edge;

typedef struct oxp_dnode {
	const char *id;
	const oxp_node *proto;
	uint32_t scope;
	uint32_t index;        /* position in its scope */
	uint32_t *inputs;      /* per input position: value index, OXP_NONE for "" */
	uint32_t *outputs;     /* per output position: value index, OXP_NONE for "" */
	uint32_t first_edge_in, nedges_in; /* edges into this node: dag edges [first, +n) */
	uint32_t first_subscope, nsubscopes; /* scopes of its GRAPH/GRAPHS attributes */
	uint32_t function;     /* model-local function it calls, else OXP_NONE */
	int64_t opset;         /* version of its domain its scope imports, 0 when none */
	const struct oxp_schema *schema; /* operator schema in effect at that opset (see
	                                    "Operator schemas"), NULL when none applies */
	/* Computable without any input data: from initializers, constants and the shapes of
	 * other tensors (Shape, Size and EyeLike read only their input's shape, CastLike only
	 * its target's type), whatever its rank or element type; outer values count as their
	 * producer does, a subgraph's own inputs as data.  Never for random ops, nodes holding
	 * subgraphs, calls of model-local functions, ops of other domains, nodes on or behind
	 * a cycle (parser/bookkeeping.c; docs/render.md folds them). */
	bool bookkeeping;
} oxp_dnode;

typedef enum oxp_warning_kind {
	OXP_W_DANGLING = 0,    /* input names a value nobody produces */
	OXP_W_DUPLICATE,       /* two producers for one name (the first wins) */
	OXP_W_NOT_SORTED,      /* a node uses a value produced by a later node */
	OXP_W_CYCLE,           /* nodes on a cycle */
	OXP_W_UNUSED_INITIALIZER,
	OXP_W_UNPRODUCED_OUTPUT,
	OXP_W_UNKNOWN_FUNCTION_DOMAIN /* reserved */
} oxp_warning_kind;

const char *oxp_warning_kind_name(oxp_warning_kind k); /* "dangling_input", ... */

typedef struct oxp_warning {
	oxp_warning_kind kind;
	const char *message;   /* one line; model names escaped as \xNN when not printable */
	uint32_t scope;
	uint32_t value;        /* the value concerned, or OXP_NONE */
	uint32_t nnodes;
	uint32_t *nodes;       /* node indices involved (capped at 64) */
} oxp_warning;

typedef struct oxp_dag_summary {
	uint32_t nscopes, nsubgraphs, max_depth;
	uint64_t parameters;             /* the sum of every value's params */
	uint64_t parameter_bytes;        /* stored bytes of every constant tensor (dims x
	                                    dtype, sub-byte types packed), scales included */
	uint64_t params_by_dtype[OXP_DT__COUNT]; /* params by their element type (UINT4 for
	                                            a 4-bit weight) ... */
	uint64_t bytes_by_dtype[OXP_DT__COUNT];  /* ... and the bytes that hold them */
	uint64_t scale_elements, scale_bytes;    /* the scales and zero points (OXP_PARAM_SCALE) */
} oxp_dag_summary;

typedef struct oxp_dag oxp_dag; /* opaque owner of the arrays below */

typedef struct oxp_dag_view {
	uint32_t nscopes, nnodes, nvalues, nedges, nwarnings;
	const oxp_scope *scopes;     /* scopes[0] is the main graph (when the model has one) */
	const oxp_dnode *nodes;
	const oxp_value *values;
	const oxp_edge *edges;
	const oxp_warning *warnings;
	oxp_dag_summary summary;
} oxp_dag_view;

typedef struct oxp_dag_options {
	bool infer_shapes;       /* run shape inference (default true) */
} oxp_dag_options;

/* Link a parsed model.  Fails only on resource limits or on recursion between model-local
 * functions (OXP_E_RECURSION); problems of the graph become warnings. */
oxp_code oxp_dag_build(oxp_dag **out, const oxp_model *model, const oxp_dag_options *opt,
                       oxp_error *err);
void oxp_dag_free(oxp_dag *dag);
const oxp_dag_view *oxp_dag_get(const oxp_dag *dag);

/* Node index for a stable id, OXP_NONE when unknown. */
uint32_t oxp_dag_find_node(const oxp_dag *dag, const char *id);
/* Value visible in scope (searching enclosing scopes), OXP_NONE when unknown. */
uint32_t oxp_dag_find_value(const oxp_dag *dag, uint32_t scope, oxp_str name);
/* The best known type: declared when present, else inferred (source tells which). */
const oxp_value_type *oxp_value_best_type(const oxp_value *v);
/* The constant tensor value vi is: an initializer, a sparse initializer's values, or the
 * tensor of a Constant node (default domain) it is the output of; NULL for any other
 * value.  Identity nodes are not followed: each constant is one value (params.c). */
const oxp_tensor *oxp_value_constant(const oxp_dag_view *v, uint32_t vi);

/* The values shape inference knows for a small integer (or bool, as 0/1) tensor of rank
 * 0 or 1 with at most 64 elements: the data propagation of parser/shape.c (docs/shapes.md).
 * Each element is a known integer (OXP_DIM_VALUE, any sign), a symbol (OXP_DIM_PARAM: the
 * run-time size of the named dim) or unknown (OXP_DIM_UNKNOWN).  elems points into the
 * dag and lives as long as it. */
typedef struct oxp_known_data {
	int32_t rank;          /* 0: a scalar (count 1), 1: a vector */
	uint32_t count;
	const oxp_dim *elems;  /* count entries */
} oxp_known_data;

/* Fills *out and returns true when the values of `value` are known (even partly); false
 * when nothing is (or inference did not run). */
bool oxp_dag_value_data(const oxp_dag *dag, uint32_t value, oxp_known_data *out);

/* ---------------------------------------------------------------------------------------
 * Operator schemas (parser/schema.c): every version of every operator of the default
 * domain, ai.onnx.ml, ai.onnx.preview.training, ai.onnx.preview and com.microsoft — inputs
 * and outputs with their flags, attributes with type, required flag and default, type
 * constraints — from a table generated by tests/tools/gen_schemas.py (docs/schemas.md).
 * The table is static: every pointer below stays valid for the life of the program.
 * Domain "" and "ai.onnx" are both the default domain.
 */
typedef struct oxp_schema oxp_schema; /* one version of one operator */

typedef enum oxp_schema_status {
	OXP_SCHEMA_FOUND = 0, /* *out is the version in effect at that opset */
	OXP_SCHEMA_NO_DOMAIN, /* no schemas for that domain (a custom domain) */
	OXP_SCHEMA_NO_OP,     /* the domain has no operator of that name */
	OXP_SCHEMA_TOO_NEW    /* the operator comes in a later opset: *out is its first version */
} oxp_schema_status;

/* The version of op_type in effect at `opset` of `domain`: the one with the highest
 * since_version <= opset.  *out is written for FOUND and TOO_NEW. */
oxp_schema_status oxp_schema_find(oxp_str domain, oxp_str op_type, int64_t opset,
                                  const oxp_schema **out);

enum { OXP_PORT_OPTIONAL = 1u, OXP_PORT_VARIADIC = 2u, OXP_PORT_HETEROGENEOUS = 4u };
#define OXP_SCHEMA_UNBOUNDED UINT32_MAX

/* A set of types: bit (1u << dtype) per kind of value; `other` when maps, sequences of
 * maps or opaque types are allowed too (never checked). */
typedef struct oxp_schema_types {
	uint32_t tensor, sequence, optional_tensor, optional_sequence, sparse;
	bool other;
} oxp_schema_types;

typedef struct oxp_schema_info {
	const char *domain;    /* "" for the default domain */
	const char *name;
	int32_t since_version;
	bool deprecated;
	bool contrib;          /* com.microsoft: onnxruntime's operators, not the standard */
	uint32_t ninputs, noutputs, nattrs, nconstraints; /* declared formal parameters */
	uint32_t min_inputs, max_inputs, min_outputs, max_outputs; /* OXP_SCHEMA_UNBOUNDED */
} oxp_schema_info;

typedef struct oxp_schema_port {
	const char *name;      /* "X" */
	unsigned flags;        /* OXP_PORT_* */
	const char *param;     /* its type parameter ("T"), NULL when the type is written out */
	int32_t constraint;    /* index of that parameter's constraint, -1 when none */
	oxp_schema_types types;/* the types it accepts */
} oxp_schema_port;

typedef struct oxp_schema_attr {
	const char *name;
	int32_t type;          /* oxp_attr_type */
	bool required;
	const char *default_json; /* the default as a JSON literal ("1", "\"NOTSET\"", "[1,1]",
	                             "0.0001"), NULL when the schema gives none */
} oxp_schema_attr;

typedef struct oxp_schema_constraint {
	const char *name;      /* "T" */
	oxp_schema_types types;
} oxp_schema_constraint;

void oxp_schema_get_info(const oxp_schema *s, oxp_schema_info *out);
/* Formal parameter i (false when i is beyond the declared ones). */
bool oxp_schema_input(const oxp_schema *s, uint32_t i, oxp_schema_port *out);
bool oxp_schema_output(const oxp_schema *s, uint32_t i, oxp_schema_port *out);
bool oxp_schema_attribute(const oxp_schema *s, uint32_t i, oxp_schema_attr *out);
bool oxp_schema_constraint_at(const oxp_schema *s, uint32_t i, oxp_schema_constraint *out);
/* The attributes a node leaves to their defaults: from index *i on, the next attribute
 * of the schema that has a default and that the node does not give; *i is advanced past
 * it.  False when there is none left.  Start with *i = 0. */
bool oxp_schema_next_left_default(const oxp_schema *s, const oxp_node *n, uint32_t *i,
                                  oxp_schema_attr *out);
/* Index of the attribute named `name`, -1 when the schema has none. */
int32_t oxp_schema_find_attribute(const oxp_schema *s, oxp_str name);
/* The formal parameter that takes a node's input (output) position k: its index, and in
 * *nth (when not NULL) the position within a variadic parameter (0 otherwise); -1 when k is
 * beyond every declared parameter. */
int32_t oxp_schema_port_of(const oxp_schema *s, bool output, size_t k, uint32_t *nth);
/* The name people read for position k: "X", or "inputs[2]" for the third value of a
 * variadic parameter; NULL when no parameter takes k.  Written into buf (NUL-terminated;
 * 64 bytes always suffice). */
const char *oxp_schema_port_label(const oxp_schema *s, bool output, size_t k, char *buf,
                                  size_t size);
/* The operator's documentation page (versioned: with the anchor of this version), e.g.
 * "https://onnx.ai/onnx/operators/onnx__Conv.html#l-onnx-op-conv-11".  Returns buf. */
const char *oxp_schema_link(const oxp_schema *s, bool versioned, char *buf, size_t size);
/* Whether a value of this kind and element type is in the set.  Unknown kinds (NONE) and
 * sets with `other` always pass. */
bool oxp_schema_types_allow(const oxp_schema_types *t, oxp_type_kind kind, int32_t elem);
/* "tensor(float), tensor(float16), seq(tensor(float))" into buf; returns buf. */
const char *oxp_schema_types_text(const oxp_schema_types *t, char *buf, size_t size);

/* The newest opset the table knows for a domain; 0 for a domain it has no schemas for. */
int64_t oxp_schema_newest_opset(oxp_str domain);
/* The oldest IR version that carries this opset of the default domain, ai.onnx.ml or
 * ai.onnx.preview.training (onnx's version table); 0 when unknown. */
int64_t oxp_schema_min_ir(oxp_str domain, int64_t opset);
/* The newest IR version the table's sources describe. */
int64_t oxp_schema_newest_ir(void);
/* Every schema in table order (for tests and benchmarks); NULL when i is past the end. */
const oxp_schema *oxp_schema_at(size_t i);
size_t oxp_schema_count(void);

/* Whether an attribute holds its schema default (same type and value; floats compare as
 * float32).  False when the schema gives no default. */
bool oxp_schema_attr_is_default(const oxp_schema_attr *sa, const oxp_attr *a);
/* The default as display text: strings unquoted, lists without brackets ("NOTSET", "1",
 * "1,1", "0.0001"); "" when there is none.  Returns buf. */
const char *oxp_schema_default_text(const oxp_schema_attr *sa, char *buf, size_t size);

/* The name of a node's input (output) position k: the schema's ("W", "inputs[2]"), else,
 * for a call of a model-local function, the function's formal name; NULL when neither
 * names it.  Written into buf (80 bytes suffice for schema names; function names are cut
 * to fit). */
const char *oxp_dag_port_label(const oxp_dag *d, uint32_t node, bool output, size_t k,
                               char *buf, size_t size);

/* The version of `domain` that scope imports: a function its own opset_import, every other
 * scope the model's; a model importing nothing (IR < 3) has the default domain at 1.
 * 0 when not imported. */
int64_t oxp_dag_scope_opset(const oxp_dag *d, uint32_t scope, oxp_str domain);

/* ---------------------------------------------------------------------------------------
 * Model check (parser/check.c): what onnx.checker's full check rejects, and a little more,
 * as problems with a severity, a stable code, the node and a message (docs/check.md).
 * Errors are what onnx.checker (with strict shape inference) rejects; warnings are things
 * it accepts that are still wrong or doubtful (and every problem of a com.microsoft node:
 * those schemas are onnxruntime's, not the standard's); infos are worth knowing.
 */
typedef enum oxp_severity { OXP_SEV_ERROR = 0, OXP_SEV_WARNING, OXP_SEV_INFO } oxp_severity;

typedef enum oxp_check_code {
	/* the model */
	OXP_C_IR_VERSION_MISSING = 0, /* no ir_version */
	OXP_C_IR_VERSION_NEWER,       /* ir_version newer than the newest onnxviz knows */
	OXP_C_OPSET_IMPORT_MISSING,   /* IR >= 3 without opset_import */
	OXP_C_OPSET_IMPORT_OLD_IR,    /* IR < 3 with opset_import */
	OXP_C_OPSET_VERSION_UNKNOWN,  /* an imported opset beyond the newest known, or < 1 */
	OXP_C_IR_OPSET_MISMATCH,      /* an imported opset needs a newer IR version */
	OXP_C_GRAPH_IO,               /* a graph input/output/initializer declared incompletely */
	OXP_C_DUPLICATE_INPUT,        /* a graph input or initializer name given twice */
	OXP_C_TENSOR_STORAGE,         /* a tensor's values stored where onnx forbids */
	OXP_C_TENSOR_SIZE,            /* stored values disagree with dims x data type */
	OXP_C_EXTERNAL_DATA,          /* an external data file that is missing or unusable */
	OXP_C_OUTPUT_NOT_PRODUCED,    /* a graph output nothing produces */
	OXP_C_UNUSED_INITIALIZER,     /* an initializer nothing uses */
	OXP_C_UNCHECKED_DOMAIN,       /* nodes of a domain onnxviz has no schemas for */
	/* one node */
	OXP_C_DOMAIN_NOT_IMPORTED,    /* the node's domain is not in opset_import */
	OXP_C_UNKNOWN_OP,             /* no such operator in its domain */
	OXP_C_EXPERIMENTAL_OP,        /* an old experimental op onnx.checker skips */
	OXP_C_OP_TOO_NEW,             /* the op comes in a later opset than the one imported */
	OXP_C_DEPRECATED_OP,          /* the version in effect is deprecated (Upsample >= 10) */
	OXP_C_NODE_WITHOUT_IO,        /* no inputs and no outputs */
	OXP_C_TOO_FEW_INPUTS,
	OXP_C_TOO_MANY_INPUTS,
	OXP_C_TOO_FEW_OUTPUTS,
	OXP_C_TOO_MANY_OUTPUTS,
	OXP_C_REQUIRED_INPUT_EMPTY,   /* "" where a required input belongs */
	OXP_C_REQUIRED_OUTPUT_EMPTY,
	OXP_C_MISSING_ATTRIBUTE,      /* a required attribute is absent */
	OXP_C_UNKNOWN_ATTRIBUTE,
	OXP_C_DUPLICATE_ATTRIBUTE,
	OXP_C_ATTRIBUTE_TYPE,         /* an attribute of the wrong type */
	OXP_C_EMPTY_ATTRIBUTE,        /* a list attribute with no element */
	OXP_C_TYPE_CONSTRAINT,        /* an element type the op does not accept there */
	OXP_C_TYPE_BINDING,           /* one type parameter bound to two different types */
	OXP_C_UNDEFINED_VALUE,        /* an input nothing produces */
	OXP_C_USED_BEFORE_PRODUCED,   /* an input produced by a later node (or a cycle) */
	OXP_C_DUPLICATE_OUTPUT,       /* an output name already defined (SSA) */
	OXP_C__COUNT
} oxp_check_code;

const char *oxp_check_code_name(oxp_check_code c);   /* "missing_attribute", ... */
oxp_severity oxp_check_code_severity(oxp_check_code c); /* its usual severity */
const char *oxp_severity_name(oxp_severity s);       /* "error", "warning", "info" */

typedef struct oxp_problem {
	oxp_check_code code;
	oxp_severity severity;
	uint32_t scope;       /* the scope concerned, OXP_NONE for the model */
	uint32_t node;        /* dag node, OXP_NONE when not about one node */
	uint32_t value;       /* dag value, OXP_NONE when not about one value */
	const char *message;  /* one line; model names escaped as \xNN when not printable */
} oxp_problem;

#define OXP_CHECK_MAX_LISTED 5000

typedef struct oxp_check_view {
	uint32_t nproblems;         /* listed: at most OXP_CHECK_MAX_LISTED, the first found */
	const oxp_problem *problems;/* model problems first, then in node order */
	uint64_t count[3];          /* problems found per severity, listed or not */
	uint64_t by_code[OXP_C__COUNT];
} oxp_check_view;

typedef struct oxp_check oxp_check; /* opaque owner */

/* Check a parsed, linked model (the dag built with shape inference gives type checks
 * more to work with).  data_dirfd: the directory external data locations are relative to
 * (each external file is then opened as oxp_external_open does, and a file that cannot
 * be used is an error, as onnx.checker's missing file is); -1 leaves the files alone.
 * Fails only when out of memory. */
oxp_code oxp_check_run(oxp_check **out, const oxp_model *m, const oxp_dag *d, int data_dirfd,
                       oxp_error *err);
const oxp_check_view *oxp_check_get(const oxp_check *c);
void oxp_check_free(oxp_check *c);

/* ---------------------------------------------------------------------------------------
 * Arena: the bump allocator each model uses, available to other modules for structures
 * that live and die together.  Memory is zeroed, 16-byte aligned; every call returns NULL
 * once `budget` bytes would be exceeded or malloc fails; oxp_arena_free() releases all.
 */
typedef struct oxp_arena oxp_arena;

oxp_arena *oxp_arena_new(size_t budget);
void oxp_arena_free(oxp_arena *a);
void *oxp_arena_alloc(oxp_arena *a, size_t size);
void *oxp_arena_array(oxp_arena *a, size_t n, size_t size); /* overflow-checked n*size */
char *oxp_arena_strndup(oxp_arena *a, const char *s, size_t len);
char *oxp_arena_printf(oxp_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t oxp_arena_used(const oxp_arena *a);
/* True once any allocation from this arena has failed: a user that lets a NULL through
 * (an optional label, say) checks this before calling its result complete. */
bool oxp_arena_failed(const oxp_arena *a);
/* Why: OXP_OK (no allocation failed), OXP_E_NOMEM (malloc failed) or OXP_E_BUDGET (the
 * arena's budget was reached). */
oxp_code oxp_arena_code(const oxp_arena *a);

/* For a process that runs one command and exits (the CLI; never a server): from this call
 * on, every arena's chunks are carved from one region of `bytes` (rounded up to 2 MB)
 * advised for transparent huge pages, until it is spent; then from the heap and
 * mappings as before.  What is carved is never given back, so freeing an arena no longer
 * returns its memory: the process's RSS only grows.  On the VMs onnxviz runs on this
 * makes `inspect` of an 88 MB model ~2 ms faster (docs/decisions.md 78).  Call it before
 * any other thread uses an arena; later calls do nothing.  False when the region cannot
 * be mapped (arenas then work as before). */
bool oxp_arena_one_shot(size_t bytes);

/* Find a tensor by preview key: an initializer name (main graph first, then other
 * scopes), the name of a value produced by a Constant node, or a document "ref"
 * ("<scope>@i<k>", "<scope>@s<k>" (its values), "<node id>@a<k>[.<j>]").  NULL when
 * unknown. */
const oxp_tensor *oxp_dag_find_tensor(const oxp_dag *dag, const char *key);

/* ---------------------------------------------------------------------------------------
 * Named patterns (parser/fusion.c; the rules: docs/render.md, "Named patterns").
 *
 * oxp_fusion_find() recognises groups of plain ops that compute exactly one ONNX op:
 * LayerNormalization (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div [, Mul [, Add]]),
 * RMSNormalization, Gelu (erf and tanh forms), Swish (x * Sigmoid(x)), HardSwish, scaled
 * dot-product Attention (MatMul, a scale, an optional additive mask, Softmax, MatMul) and
 * the MatMul + Add that is a Gemm.  Axes, the epsilon's place, constant values, the shared
 * input, broadcasting and the single use of every inner value are checked: a near miss
 * is no match.  Each node belongs to at most one match.
 */
typedef enum oxp_fusion_kind {
	OXP_FU_LAYERNORM = 0, /* in: X, Scale, B */
	OXP_FU_RMSNORM,       /* in: X, scale */
	OXP_FU_GELU,          /* in: X; tanh for approximate="tanh" */
	OXP_FU_SWISH,         /* in: X */
	OXP_FU_HARDSWISH,     /* in: X */
	OXP_FU_ATTENTION,     /* in: Q, K transposed (as the first MatMul reads it), V, mask */
	OXP_FU_GEMM,          /* in: A, B, C */
	OXP_FU__COUNT
} oxp_fusion_kind;

#define OXP_FUSION_MAX_NODES 12

typedef struct oxp_fusion {
	uint8_t kind;             /* oxp_fusion_kind */
	bool tanh;                /* Gelu: the tanh approximation */
	uint32_t anchor;          /* the node whose output is the match's output */
	uint32_t output;          /* that value */
	uint32_t nnodes;
	uint32_t nodes[OXP_FUSION_MAX_NODES]; /* the nodes of the match, in graph order */
	uint32_t in[4];           /* the op's inputs (see the kinds), OXP_NONE when absent */
	const oxp_tensor *tin[4]; /* the constant tensor behind each (an initializer or a
	                             Constant's value, through Identity), else NULL */
	int64_t axis;             /* norms: first normalised axis, negative (-1: the last) */
	double epsilon;           /* norms */
	double scale;             /* Attention: the factor applied to Q·Kᵀ */
} oxp_fusion;

typedef struct oxp_fusions {
	uint32_t nmatches;
	const oxp_fusion *matches;  /* in the order of their anchors */
	const uint32_t *node_match; /* per dag node: its match, OXP_NONE */
	uint32_t counts[OXP_FU__COUNT];
} oxp_fusions;

/* Recognise the named patterns of every scope of d.  *out lives in arena a (one
 * allocation per node plus the matches); OXP_E_NOMEM when a runs out.  Linear in nodes
 * and edges: each node is tried as the start of each pattern once, each step follows one
 * edge, constants are folded at most a few levels deep. */
oxp_code oxp_fusion_find(const oxp_dag *d, oxp_arena *a, const oxp_fusions **out,
                         oxp_error *err);
/* "LayerNormalization", "RMSNormalization", "Gelu", "Swish", "HardSwish", "Attention",
 * "Gemm"; "?" when out of range. */
const char *oxp_fusion_name(unsigned kind);

/* ---------------------------------------------------------------------------------------
 * Quantization (parser/quant.c; the formats and rules: docs/quant.md).
 *
 * oxp_quant_analyze() reads a linked graph and says, per node, whether it is a quantized
 * op (and which float op it stands for, with its precision), quantization plumbing
 * (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, the Cast/Mul/Add of a dynamic
 * chain) and which box it joins, or a DequantizeLinear of a constant (a weight that folds
 * into its consumers); plus the model's quantization summary.  oxp_dequant_find() pairs a
 * quantized tensor with the scale and zero point the graph applies to it, and the
 * oxp_dequant_* functions turn its integers into the float32 values a runtime uses.
 * Everything is bounded by the graph's size; nothing recurses.
 */
typedef enum oxp_qformat {
	OXP_QF_QDQ = 1,         /* QuantizeLinear / DequantizeLinear around float ops */
	OXP_QF_QOPERATOR = 2,   /* QLinearConv, QLinearMatMul, ConvInteger, com.microsoft QLinear* */
	OXP_QF_DYNAMIC = 4,     /* DynamicQuantizeLinear chains, DynamicQuantizeMatMul, ... */
	OXP_QF_WEIGHT_ONLY = 8  /* MatMulNBits, GatherBlockQuantized, DequantizeLinear of weights
	                           feeding an op with float activations */
} oxp_qformat;

const char *oxp_qformat_name(unsigned f); /* one bit: "qdq", "qoperator", ... */

typedef enum oxp_qrole {
	OXP_QR_NONE = 0,   /* not quantization (a float op, a Constant, ...) */
	OXP_QR_OP,         /* a quantized op: drawn as the float op it stands for */
	OXP_QR_PART,       /* plumbing that joins the box of `rep` (or is drawn: rep OXP_NONE) */
	OXP_QR_WEIGHT      /* DequantizeLinear of a constant: a row of each consumer */
} oxp_qrole;

typedef enum oxp_qgran {
	OXP_QG_NONE = 0, OXP_QG_TENSOR, OXP_QG_AXIS, OXP_QG_BLOCK
} oxp_qgran;

typedef enum oxp_qslot { OXP_QS_INPUT = 0, OXP_QS_WEIGHT, OXP_QS_BIAS, OXP_QS_OUTPUT } oxp_qslot;

typedef struct oxp_qtensor {  /* one quantized tensor of a quantized op */
	uint8_t slot;             /* oxp_qslot */
	uint8_t gran;             /* oxp_qgran (of the scale) */
	bool dynamic;             /* scale computed at run time (DynamicQuantizeLinear) */
	uint8_t bits;             /* packed formats (MatMulNBits): bits per value, else 0 */
	int32_t qtype;            /* element type of the quantized values, 0 when unknown */
	int64_t block;            /* OXP_QG_BLOCK: values per block */
	uint32_t data;            /* the quantized value (dag), OXP_NONE when not named */
	uint32_t scale, zero_point; /* dag values, OXP_NONE when absent */
	uint32_t node;            /* node that pairs them (DequantizeLinear, QLinearConv, ...) */
	uint64_t count;           /* constant data: its logical elements (4-bit values, K x N of
	                             MatMulNBits), else 0 */
} oxp_qtensor;

typedef struct oxp_qop {      /* a quantized op */
	uint32_t node;            /* the node drawn */
	const char *float_op;     /* the float op it stands for: "Conv", "MatMul", ... */
	uint8_t format;           /* one oxp_qformat */
	int32_t wtype;            /* the weights' element type (0: no quantized weight) */
	const char *wname;        /* precision name when no data type says it ("NF4"), or NULL */
	int32_t atype;            /* the activations' element type (0: float activations) */
	bool dynamic;             /* activations quantized at run time */
	uint8_t gran;             /* of the weights */
	int64_t block;
	uint32_t nqt;
	const oxp_qtensor *qt;    /* inputs, weights, bias, outputs */
} oxp_qop;

typedef struct oxp_qnode {
	uint8_t role;             /* oxp_qrole */
	uint32_t rep;             /* OXP_QR_PART: the node whose box it joins, or OXP_NONE */
	uint32_t op;              /* OXP_QR_OP: index into oxp_quant.ops */
} oxp_qnode;

typedef struct oxp_qcount {   /* one precision of the summary */
	int32_t dtype;            /* element type, or 0 with `name` */
	const char *name;         /* "INT8", "NF4", ... */
	uint64_t ops;             /* quantized ops of this precision */
	uint64_t tensors;         /* distinct quantized constant tensors of it */
	uint64_t parameters;      /* their elements (logical: 4-bit values, not bytes) */
} oxp_qcount;

enum { OXP_QV_DATA = 1, OXP_QV_SCALE = 2 };

typedef struct oxp_qvalue {   /* what quantization makes of one constant (dag value) */
	uint8_t mark;             /* OXP_QV_DATA: the quantized values of a weight or integer
	                             bias; OXP_QV_SCALE: a scale or zero point; 0: neither */
	int32_t dtype;            /* DATA: the values' element type (UINT4 for 4 bits packed in
	                             uint8), 0 when no data type says it (NF4, 3 bits) */
	uint64_t count;           /* DATA: its logical elements (the weights' `parameters`) */
} oxp_qvalue;

typedef struct oxp_quant {
	uint32_t nnodes;
	const oxp_qnode *nodes;   /* per dag node */
	uint32_t nops;
	const oxp_qop *ops;
	unsigned formats;         /* OR of the oxp_qformat seen */
	uint64_t plumbing;        /* nodes with role PART or WEIGHT */
	uint64_t float_ops;       /* nodes with role NONE, Constant nodes left out */
	uint64_t quant_params;    /* elements of constant scales and zero points */
	uint64_t float_params;    /* parameters of floating constants neither quantized nor a
	                             scale or zero point */
	uint64_t other_params;    /* the same of other element types (int64 shapes, indices) */
	uint32_t nvalues;
	const oxp_qvalue *values; /* per dag value; marks on the constant itself (behind any
	                             Identity nodes) */
	uint32_t nweights, nacts;
	const oxp_qcount *weights; /* by weight precision, most parameters first */
	const oxp_qcount *acts;    /* by activation precision (ops only), most ops first */
	uint64_t dynamic_ops;     /* quantized ops whose activations are quantized at run time */
} oxp_quant;

/* Analyse d into memory of arena a (freed with it).  OXP_E_NOMEM when the arena is out. */
oxp_code oxp_quant_analyze(const oxp_dag *d, oxp_arena *a, const oxp_quant **out,
                           oxp_error *err);

/* How one quantized tensor dequantizes: y = (q - zero_point) * scale in float32, with the
 * scale (and zero point) of its element's tensor, axis index or block. */
typedef enum oxp_dq_layout {
	OXP_DQL_PLAIN = 0,   /* the tensor's own elements (INT4/UINT4 unpacked by the readers) */
	OXP_DQL_NBITS,       /* MatMulNBits B: uint8 [N, k_blocks, blob], bits per value */
	OXP_DQL_PACKED       /* uint8 holding 8/bits values, low bits first (GatherBlockQuantized) */
} oxp_dq_layout;

#define OXP_DQ_MAX_DIMS 16

typedef struct oxp_dequant {
	uint32_t node;            /* the node pairing them; OXP_NONE when nothing does */
	uint32_t input;           /* position of the data on that node */
	const oxp_tensor *data, *scale, *zero_point; /* zero_point NULL: zp_default */
	uint32_t data_value, scale_value, zp_value;  /* dag values (zp OXP_NONE when absent) */
	int32_t qtype;            /* element type of the logical values (UINT4 for 4-bit NBits) */
	unsigned bits;
	bool qfloat;              /* FLOAT8 / FLOAT4 data: y = float(x) * scale */
	int64_t qmin, qmax;       /* the integer range */
	uint8_t layout;           /* oxp_dq_layout */
	uint8_t gran;             /* oxp_qgran */
	int64_t axis, block;      /* normalised axis (AXIS, BLOCK) and block size (BLOCK) */
	size_t ndims;
	int64_t dims[OXP_DQ_MAX_DIMS]; /* logical dims ([N, K] for MatMulNBits) */
	uint64_t count;           /* logical elements */
	uint64_t nscales;         /* elements the scale (and zero point) must have */
	int64_t zp_default;
	bool zp_float;            /* zero point of a floating type (MatMulNBits) */
	bool zp_packed;           /* uint8 zero points packed bits-wise (NBits, PACKED) */
	uint64_t zp_stored;       /* elements the zero point tensor must have */
	/* index arithmetic */
	uint64_t dim, inner, nblocks;   /* axis length, elements after it, blocks along it */
	uint64_t row_bytes;       /* NBITS: bytes of one row of B */
	uint64_t zp_row_len, zp_row_bytes; /* packed zero points: values and bytes per row */
} oxp_dequant;

/* Pair tensor t (an initializer or a Constant's value of d) with what dequantizes it: the
 * first consumer (through Identity nodes) that gives it a scale — DequantizeLinear,
 * QLinearConv, QLinearMatMul, QGemm, QAttention, DynamicQuantizeMatMul,
 * MatMulIntegerToFloat, MatMulNBits, GatherBlockQuantized, a dynamic ConvInteger /
 * MatMulInteger chain.  OXP_OK with out->node == OXP_NONE when nothing does; an error
 * (OXP_E_DTYPE, OXP_E_RANGE, OXP_E_STORAGE) with a message when the pairing is invalid
 * (a scale that does not fit, a bad axis, a computed scale). */
oxp_code oxp_dequant_find(const oxp_dag *d, const oxp_tensor *t, oxp_dequant *out,
                          oxp_error *err);
/* The stored elements of dq->data holding logical elements [i, i+n) (n > 0). */
void oxp_dequant_span(const oxp_dequant *dq, uint64_t i, uint64_t n, uint64_t *first,
                      uint64_t *count);
/* Logical integers q[0..n) of elements [i, i+n) from raw[] = stored elements [first, ...)
 * read with oxp_tensor_read_i64 (as oxp_dequant_span gave them). */
void oxp_dequant_unpack(const oxp_dequant *dq, uint64_t i, size_t n, const int64_t *raw,
                        uint64_t first, int64_t *q);
/* The zero point per scale element: zp[nscales] from the zero point's stored elements
 * raw[zp_stored] (integers; packed ones unpacked), or zp_default for all when there is
 * none. */
void oxp_dequant_zero_points(const oxp_dequant *dq, const int64_t *raw, int32_t *zp);
/* y[k] = (float)(q[k] - zp[s]) * scale[s] (zpf: (float)q - zpf[s], for floating zero
 * points; zp and zpf NULL: no zero point), s the scale element of logical element i + k.
 * Float32 arithmetic throughout, as numpy's float32 computes it. */
void oxp_dequant_apply(const oxp_dequant *dq, uint64_t i, size_t n, const int64_t *q,
                       const float *scale, const int32_t *zp, const float *zpf, float *y);
/* The same for FLOAT8 / FLOAT4 data: y[k] = (float)x[k] * scale[s]. */
void oxp_dequant_apply_float(const oxp_dequant *dq, uint64_t i, size_t n, const double *x,
                             const float *scale, float *y);
/* The scale element of logical element i. */
uint64_t oxp_dequant_scale_index(const oxp_dequant *dq, uint64_t i);
const char *oxp_qgran_name(unsigned g); /* "per-tensor", "per-axis", "blocked", "" */

/* ---------------------------------------------------------------------------------------
 * Cost (parser/cost.c; the definitions per op family and their sources: docs/cost.md).
 *
 * oxp_cost_compute() reads a linked graph with inferred shapes and gives, per node, per
 * scope and in total: MACs (one multiply-accumulate = 1), other arithmetic ops (compare,
 * exp, div, ..., one each, counted apart from MACs), parameters (initializers, each counted
 * once, at its first consumer in node order) and activation bytes read and written.
 * FLOPs = 2 x MACs + other ops (oxp_cost_flops).
 *
 * A figure is a polynomial in the model's named dims (dim_param symbols): a sum of at most
 * OXP_COST_MAX_TERMS terms, each a signed-64-bit coefficient times at most
 * OXP_COST_MAX_DEGREE symbols.  Arithmetic is checked: a coefficient beyond 2^63-1 is
 * OXP_COST_TOO_LARGE, a polynomial beyond the bounds OXP_COST_TOO_COMPLEX; a figure that
 * needs a dim nobody knows is OXP_COST_UNKNOWN.  Those flags replace the terms: a flagged
 * figure has no value, never a wrapped or guessed one.  Dims bound by oxp_cost_bind are
 * numbers.  Nothing recurses; the work is linear in nodes + edges.
 */
#define OXP_COST_MAX_TERMS 8
#define OXP_COST_MAX_DEGREE 4
#define OXP_COST_MAX_SYMBOLS 255
#define OXP_COST_MAX_BIND 32

enum { OXP_COST_UNKNOWN = 1u, OXP_COST_TOO_LARGE = 2u, OXP_COST_TOO_COMPLEX = 4u };

typedef struct oxp_cost_term {
	int64_t coef;                        /* > 0 */
	uint8_t degree;                      /* symbols in sym[] (0: the constant term) */
	uint8_t sym[OXP_COST_MAX_DEGREE];    /* indices into oxp_cost.symbols, ascending */
} oxp_cost_term;

typedef struct oxp_cost_poly {
	uint8_t flags;                       /* OXP_COST_*; when non-zero the terms are void */
	uint8_t nterms;                      /* 0: the figure is 0 */
	oxp_cost_term t[OXP_COST_MAX_TERMS];
} oxp_cost_poly;

typedef enum oxp_cost_kind {
	OXP_CK_COUNTED = 0,  /* an op with an entry: its figures */
	OXP_CK_MOVE,         /* data movement (Reshape, Transpose, Gather, Cast, ...): no
	                        arithmetic, bytes only */
	OXP_CK_BOOKKEEPING,  /* folded bookkeeping (oxp_dnode.bookkeeping): costs 0 */
	OXP_CK_UNCOUNTED,    /* no entry (custom domains, ops without a definition): listed */
	OXP_CK_CONTROL,      /* holds subgraphs (If, Loop, Scan): their scopes are listed */
	OXP_CK_CALL          /* calls a model-local function: the figures of its body */
} oxp_cost_kind;

const char *oxp_cost_kind_name(unsigned k); /* "counted", "move", "bookkeeping", ... */

typedef struct oxp_cost_params {
	uint64_t elements;   /* stored elements of the constants (initializers, Constant nodes) */
	uint64_t bytes;      /* their stored bytes (packed sub-byte types: rounded up) */
	uint64_t weights;    /* their parameters (oxp_value.params, the summary's): the logical
	                        values of quantized weights (an int4 MatMulNBits's K x N),
	                        scales and zero points left out */
	uint64_t qbytes;     /* bytes of the scales and zero points of quantized ops */
	bool too_large;      /* a sum overflowed 64 bits: the figures are void */
} oxp_cost_params;

typedef struct oxp_cost_node {
	uint8_t kind;        /* oxp_cost_kind */
	const char *family;  /* "conv", "matmul", "attention", ...; NULL when uncounted */
	oxp_cost_poly macs, ops, read, written; /* read/written: activations, bytes */
	oxp_cost_params params; /* constants first used (or held) here */
} oxp_cost_node;

typedef struct oxp_cost_sum {
	/* sums over the nodes whose figure is known; `unknown` counts the others */
	oxp_cost_poly macs, ops, read, written;
	oxp_cost_params params;
	uint32_t nodes, counted, moves, bookkeeping, uncounted, control, calls;
	uint32_t unknown;    /* counted nodes with an unknown MAC or op figure */
} oxp_cost_sum;

typedef struct oxp_cost_optype {   /* one op type (domain, op) with its sums */
	oxp_str domain, op;
	uint8_t kind;                  /* oxp_cost_kind of its first node */
	uint32_t count, unknown;
	oxp_cost_poly macs, ops;
} oxp_cost_optype;

typedef struct oxp_cost {
	uint32_t nnodes;
	const oxp_cost_node *nodes;    /* per dag node */
	uint32_t nscopes;
	const oxp_cost_sum *scopes;    /* per dag scope: its own nodes */
	oxp_cost_sum total;            /* the main graph, with the bodies of functions it calls
	                                  (subgraph and training scopes are listed apart) */
	uint32_t nsymbols;
	const oxp_str *symbols;        /* the dims a figure may name */
	uint32_t ntypes;
	const oxp_cost_optype *types;  /* every op type, most MACs first (symbols at 1) */
	bool symbols_full;             /* more than OXP_COST_MAX_SYMBOLS dims: figures naming the
	                                  others are OXP_COST_TOO_COMPLEX */
} oxp_cost;

typedef struct oxp_cost_bind {     /* dims given a value: "batch:1,sequence_length:128" */
	uint32_t n;
	struct {
		oxp_str name;
		int64_t value;
	} dims[OXP_COST_MAX_BIND];
} oxp_cost_bind;

/* Parse "NAME:VALUE[,NAME:VALUE...]" (values 0..2^62, names non-empty, no repeats) into
 * *out, its names viewing text (which must outlive it).  OXP_E_RANGE with a message when
 * malformed. */
oxp_code oxp_cost_bind_parse(oxp_cost_bind *out, const char *text, oxp_error *err);

/* Compute into arena a (freed with it).  dims may be NULL.  OXP_E_BUDGET when the arena's
 * budget is spent, OXP_E_NOMEM when malloc fails; every other problem of the model is in
 * the figures. */
oxp_code oxp_cost_compute(const oxp_dag *d, oxp_arena *a, const oxp_cost_bind *dims,
                          const oxp_cost **out, oxp_error *err);

/* *a += *b, *p *= k (k >= 0): checked and bounded as the rest (for sums over blocks). */
void oxp_cost_poly_add(oxp_cost_poly *a, const oxp_cost_poly *b);
void oxp_cost_poly_scale(oxp_cost_poly *p, int64_t k);
/* out = 2 x macs + ops (checked as the rest). */
void oxp_cost_flops(oxp_cost_poly *out, const oxp_cost_poly *macs, const oxp_cost_poly *ops);
/* The value with every symbol at `at` (a number for ranking); NaN when flagged. */
double oxp_cost_poly_eval(const oxp_cost_poly *p, double at);
/* True when the figure is a plain number (no flag, no symbol); *out gets it. */
bool oxp_cost_poly_number(const oxp_cost_poly *p, int64_t *out);

enum { OXP_COST_FMT_EXACT = 1u }; /* exact coefficients instead of 3 significant digits */
/* "3.7 G·batch·sequence_length + 12.6 M", "231 M", "0", or the marker "unknown", "too
 * large", "too complex".  Always NUL-terminated; cut with "..." when buf is short.
 * Returns buf. */
char *oxp_cost_poly_format(const oxp_cost *c, const oxp_cost_poly *p, unsigned flags,
                           char *buf, size_t size);

/* ---------------------------------------------------------------------------------------
 * Text (parser/text.c, parser/attrtext.c): the one UTF-8 module and the one attribute
 * formatter; render/, diff/ and service/ print model bytes through these.
 */
/* The UTF-8 sequence at s[i] (of n bytes): its length and code point in *cp, or 0 when it
 * is not valid UTF-8 (overlong, surrogate, cut, beyond U+10FFFF). */
size_t oxp_utf8_at(const unsigned char *s, size_t n, size_t i, uint32_t *cp);
/* True when s[0..n) is valid UTF-8 throughout. */
bool oxp_utf8_valid(const char *s, size_t n);
/* The length of s[0..n) without a multi-byte sequence cut short at its end. */
size_t oxp_utf8_whole(const char *s, size_t n);
/* Model bytes as display text: valid UTF-8, no control characters (a space instead),
 * U+FFFD for an invalid byte, at most max_chars characters, an ellipsis marking a cut.
 * oxp_text_into writes into out, which has room for oxp_text_size(s.len, max_chars)
 * bytes, and returns the length; oxp_text allocates in the arena ("" without memory);
 * oxp_text_tail keeps the end of a long string ("…/attn/Softmax"). */
size_t oxp_text_size(size_t len, size_t max_chars);
size_t oxp_text_into(char *out, oxp_str s, size_t max_chars);
const char *oxp_text(oxp_arena *a, oxp_str s, size_t max_chars);
const char *oxp_text_tail(oxp_arena *a, oxp_str s, size_t max_chars);

/* A fixed buffer for one line of text: printf appends, and what does not fit is cut on a
 * character boundary, after which nothing more is appended (b stays a NUL-terminated
 * prefix of the whole text, valid UTF-8 when what is appended is): {.b = buf, .size = size}. */
typedef struct oxp_textbuf {
	char *b;
	size_t size, n;
	bool full; /* cut: later appends are dropped */
} oxp_textbuf;
void oxp_textbuf_printf(oxp_textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Dims as "64×3×7×7" ("scalar" for none; after 8 of more than 9, "×…(n)"). */
void oxp_textbuf_dims(oxp_textbuf *t, const int64_t *dims, size_t n);

/* The value of an attribute as one line of text, as drawings and diffs print it: floats
 * with 4 significant digits ("0.2"), ints ("3"; an element type's name for "to":
 * "FLOAT16"), lists joined by commas and cut after 8 ints, 6 floats or 4 strings
 * ("3,3", "1,2,3,4,5,6,7,8,…(12)", "[]"), strings as display text of at most 32
 * characters (12 in a list), a tensor's dims and type ("⟨64×3⟩ f32", "⟨scalar⟩ i64"),
 * "graph", "2 graphs", else the type's name.  Into buf (always NUL-terminated, cut on a
 * character boundary); returns buf. */
char *oxp_attr_text(const oxp_attr *a, char *buf, size_t size);

/* ---------------------------------------------------------------------------------------
 * Small helpers
 */
/* a equals the C string s (inline: with a literal s the length is known when compiled,
 * and op types are compared this way many times per node) */
static inline bool oxp_str_eq(oxp_str a, const char *s)
{
	size_t n = __builtin_strlen(s);
	return a.len == n && (n == 0 || __builtin_memcmp(a.p, s, n) == 0);
}

/* The project's hash of bytes, for hash tables only (not stable across versions, not for
 * anything stored or compared between processes): `seed` mixes in a key's other part (a
 * parent's index), 0 when there is none.  Eight bytes a step (names of thousands of values
 * are hashed per model: byte-at-a-time FNV-1a spent ~5 instructions a byte), then a full
 * avalanche, so the low bits serve a power-of-two table (parser/strmap.c). */
uint64_t oxp_hash(const void *p, size_t n, uint64_t seed);

/* A string -> index map (open addressing, oxp_hash): names of a model, of an overlay, scope
 * paths.  Keys are (pointer, length) views, pointer never NULL, that must outlive the map;
 * a key's bytes may be anything, NUL included (parser/strmap.c). */
typedef struct oxp_smap {
	uint32_t cap; /* power of two, 0 before init */
	uint32_t n;
	const char **key;
	size_t *len;
	uint32_t *val;
} oxp_smap;

/* Room for about `want` keys before it grows.  False when out of memory. */
bool oxp_smap_init(oxp_smap *m, uint32_t want);
void oxp_smap_free(oxp_smap *m);
/* The value of key (p, n), OXP_NONE when absent. */
uint32_t oxp_smap_get(const oxp_smap *m, const char *p, size_t n);
/* Adds (p, n) -> v unless the key is there (the first wins).  False when out of memory. */
bool oxp_smap_put(oxp_smap *m, const char *p, size_t n, uint32_t v);

/* Element count from dims; false when a dim is negative or the product overflows. */
bool oxp_dims_count(const int64_t *dims, size_t ndims, uint64_t *out);

/* ---------------------------------------------------------------------------------------
 * A model's structure as the page cuts it (parser/cut.c; web/structure.js structureOf is
 * the specification): every large tensor payload cut out and named as external data in
 * the file itself.  The service proves a structure's link with it (service/links.c).
 */
#define OXP_CUT_THRESHOLD 1024          /* smallest payload cut (structure.js THRESHOLD) */
#define OXP_CUT_MIN_SAVING (64u << 10)  /* less in total: no structure (MIN_SAVING) */
#define OXP_CUT_MAX_DEPTH 64            /* nesting budget (MAX_DEPTH) */
#define OXP_CUT_LOCATION_MAX 255        /* longest location the page names */

/* Takes n bytes of the structure (a view valid during the call); false stops the cut. */
typedef bool (*oxp_cut_sink)(void *ctx, const void *p, size_t n);

typedef struct oxp_cut_info {
	uint64_t cut;     /* payload bytes cut out */
	uint64_t tensors; /* tensors whose payload was cut */
	uint64_t bytes;   /* the structure's length */
	uint64_t external; /* tensors whose data_location is EXTERNAL already (a model whose
	                      weights are in data files: the page sends it as its structure) */
	bool cuts;        /* the page would send this structure (tensors > 0 and
	                     cut >= min_saving); else it sends the file as it is */
} oxp_cut_info;

/* The location the page names for a file called name (structure.js locationOf): name
 * itself when the server's rules take it as it is (no '/', '\', control byte, "X:"
 * drive, "." or "..", 1..255 bytes), else "model.onnx" (then false).  out gets it. */
bool oxp_cut_location(const char *name, char *out, size_t size);

/* Cut the model buf[0, size) (a whole ONNX file, usually a read-only mapping) naming
 * `location` (at most OXP_CUT_LOCATION_MAX bytes): *info says what is cut, and when the
 * page would send a structure (info->cuts: min_saving is the page's OXP_CUT_MIN_SAVING,
 * other values for tests) and sink is not NULL, the structure's bytes go
 * to sink in order, as views into buf and a few new bytes (never a copy of the whole).
 * Payloads are never read.  OXP_OK, or the walk's error (a file the page would send as it
 * is: not protobuf, truncated, groups, nested deeper than OXP_CUT_MAX_DEPTH, no graph);
 * OXP_E_IO when the sink stopped. */
oxp_code oxp_cut(oxp_cut_info *info, const void *buf, size_t size, const char *location,
                 uint64_t min_saving, oxp_cut_sink sink, void *ctx, oxp_error *err);

#ifdef __cplusplus
}
#endif
#endif /* OXP_H */
