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
	OXP_E_NOMEM,       /* allocation budget exceeded, or out of memory */
	OXP_E_DIMS,        /* tensor dims negative, or their product overflows int64 */
	OXP_E_NOT_MODEL,   /* well-formed protobuf, but neither graph nor ir_version: not ONNX */
	OXP_E_IO,          /* file could not be opened, is not a regular file, or mmap failed */
	/* tensor value decoding (oxp_tensor_* below) */
	OXP_E_DTYPE,       /* data type unknown, or not valid for the requested operation */
	OXP_E_STORAGE,     /* stored values disagree with dims x dtype (count or byte size) */
	OXP_E_EXTERNAL,    /* tensor data is external: use the external-data functions */
	OXP_E_RANGE,       /* element offset or count outside the tensor */
	OXP_E_RECURSION,   /* model-local functions call each other recursively */
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
	 * typed fields walks these again. */
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
 * mapping. */
oxp_code oxp_model_open(oxp_model **out, const char *path, const oxp_limits *limits,
                        oxp_error *err);

/* Free the model, its arena and (for oxp_model_open) the mapping.  NULL is a no-op. */
void oxp_model_free(oxp_model *model);

const oxp_model_proto *oxp_model_proto_get(const oxp_model *model);
const uint8_t *oxp_model_data(const oxp_model *model); /* the input buffer */
size_t oxp_model_size(const oxp_model *model);
size_t oxp_model_arena_bytes(const oxp_model *model); /* bytes the arena holds */

/* Byte offset of p within the model's input (p must point into it). */
uint64_t oxp_model_offset(const oxp_model *model, const void *p);

/* Parse a lone TensorProto (e.g. onnx's test-data input_0.pb) from buf; the result lives in
 * a model-like container freed with oxp_model_free().  oxp_model_tensor_get() returns it
 * (NULL for models parsed with oxp_model_parse). */
oxp_code oxp_tensor_file_parse(oxp_model **out, const void *buf, size_t len,
                               const oxp_limits *limits, oxp_error *err);
const oxp_tensor *oxp_model_tensor_get(const oxp_model *model);

/* ---------------------------------------------------------------------------------------
 * Tensor values (parser/tensor.c): decoded on demand, never at parse time.
 *
 * The readers below take a tensor whose values are in the model (raw_data or a typed
 * field).  For external data, the caller maps or reads the bytes of the external region
 * (after oxp_external_resolve(), parser/external.c) and passes them as `bytes`; for inline
 * tensors pass bytes = NULL.  Element offsets/counts are in elements; sub-byte types
 * (INT4, UINT4, INT2, UINT2, FLOAT4E2M1) are packed low bits first.
 */

/* Elements the dims promise, and the elements / bytes actually stored (typed fields are
 * scanned; external tensors report the length from external_data or 0).  Fails with
 * OXP_E_STORAGE when the stored values cannot hold dims x dtype. */
typedef struct oxp_tensor_size {
	uint64_t count;        /* product of dims */
	uint64_t stored_count; /* elements present in storage */
	uint64_t stored_bytes; /* bytes of the stored payload */
} oxp_tensor_size;

oxp_code oxp_tensor_size_get(const oxp_tensor *t, oxp_tensor_size *out, oxp_error *err);

/* Decode elements [offset, offset+count) as double (integers converted, complex: real
 * part only, bool 0/1).  STRING fails with OXP_E_DTYPE. */
oxp_code oxp_tensor_read_f64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, double *out, oxp_error *err);

/* Decode integer (or bool) elements exactly as int64 (UINT64 above INT64_MAX fails with
 * OXP_E_RANGE).  Floating and string types fail with OXP_E_DTYPE. */
oxp_code oxp_tensor_read_i64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, int64_t *out, oxp_error *err);

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
} oxp_value;

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
	uint64_t parameters;             /* elements of all initializers */
	uint64_t parameter_bytes;        /* their storage bytes (dims x dtype) */
	uint64_t params_by_dtype[OXP_DT__COUNT];
	uint64_t bytes_by_dtype[OXP_DT__COUNT];
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

/* Find a tensor by preview key: an initializer name (main graph first, then other
 * scopes), the name of a value produced by a Constant node, or a document "ref"
 * ("<scope>@i<k>", "<scope>@s<k>" (its values), "<node id>@a<k>[.<j>]").  NULL when
 * unknown. */
const oxp_tensor *oxp_dag_find_tensor(const oxp_dag *dag, const char *key);

/* ---------------------------------------------------------------------------------------
 * Small helpers
 */
bool oxp_str_eq(oxp_str a, const char *s);
/* Element count from dims; false when a dim is negative or the product overflows. */
bool oxp_dims_count(const int64_t *dims, size_t ndims, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif /* OXP_H */
