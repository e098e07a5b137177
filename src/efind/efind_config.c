/*
 * efind_config.c
 *	  eFIND's parameters: the hybrid_index.efind_* settings (and
 *	  hybrid_index.flush_policy), whose defaults are the paper's best values
 *	  (section 6: FP_mh, p = 60 %, 20 % of a 512 kB buffer for the read
 *	  buffer, S2Q with temporal control of reads and writes, sequential
 *	  distance 10, stride distance 100, flushing unit 5, log of 10 MB), and
 *	  the parameters of one index: reloptions over the settings.
 *
 * An index's parameters are resolved once, when it is built, and kept in
 * its AM state (written into the map file at every checkpoint), so a
 * restart or another session with other settings cannot change how an
 * existing index behaves; REINDEX takes the current settings again.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "efind/efind.h"

int			ef_guc_buffer_kb = EF_BUFFER_KB_DEFAULT;
int			ef_guc_read_share = EF_READ_SHARE_DEFAULT;
int			ef_guc_read_policy = EF_READ_POLICY_DEFAULT;
int			ef_guc_flush_policy = EF_FLUSH_POLICY_DEFAULT;
int			ef_guc_flush_percent = EF_FLUSH_PERCENT_DEFAULT;
int			ef_guc_flush_unit = EF_FLUSH_UNIT_DEFAULT;
int			ef_guc_temporal = EF_TEMPORAL_DEFAULT;
int			ef_guc_seq_distance = EF_SEQ_DISTANCE_DEFAULT;
int			ef_guc_stride_distance = EF_STRIDE_DISTANCE_DEFAULT;
int			ef_guc_log_kb = EF_LOG_KB_DEFAULT;

static const struct config_enum_entry read_policy_options[] = {
	{"lru", EF_RB_LRU, false},
	{"s2q", EF_RB_S2Q, false},
	{"2q", EF_RB_2Q, false},
	{NULL, 0, false}
};

static const struct config_enum_entry flush_policy_options[] = {
	{"m", EF_FP_M, false},
	{"mh", EF_FP_MH, false},
	{"mha", EF_FP_MHA, false},
	{"mhao", EF_FP_MHAO, false},
	{NULL, 0, false}
};

static const struct config_enum_entry temporal_options[] = {
	{"none", EF_TC_NONE, false},
	{"reads", EF_TC_READS, false},
	{"writes", EF_TC_WRITES, false},
	{"both", EF_TC_BOTH, false},
	{NULL, 0, false}
};

const char *
ef_read_policy_name(int p)
{
	return p == EF_RB_LRU ? "lru" : p == EF_RB_S2Q ? "s2q" : "2q";
}

const char *
ef_flush_policy_name(int p)
{
	return p == EF_FP_M ? "m" : p == EF_FP_MH ? "mh" : p == EF_FP_MHA ? "mha" : "mhao";
}

const char *
ef_temporal_name(int t)
{
	return t == EF_TC_NONE ? "none" : t == EF_TC_READS ? "reads" :
		t == EF_TC_WRITES ? "writes" : "both";
}

static const HiGucDef efind_gucs[] = {
	{"hybrid_index.efind_buffer_size",
		"Buffer of an efind index (write buffer plus read buffer).",
		"The paper uses 512 kB; per index override: reloption buffer_size.",
		HI_GUC_INT, &ef_guc_buffer_kb, EF_BUFFER_KB_DEFAULT, EF_BUFFER_KB_MIN, EF_BUFFER_KB_MAX, NULL, PGC_SUSET, GUC_UNIT_KB},
	{"hybrid_index.efind_read_buffer_share",
		"Percentage of an efind index's buffer given to its read buffer.",
		"The paper's best value is 20 (section 6.2); 0 disables the read buffer.",
		HI_GUC_INT, &ef_guc_read_share, EF_READ_SHARE_DEFAULT, 0, EF_READ_SHARE_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.efind_read_buffer_policy",
		"Replacement policy of the efind read buffer: lru, s2q or 2q.",
		"The paper's best value is s2q (section 6.3).",
		HI_GUC_ENUM, &ef_guc_read_policy, EF_READ_POLICY_DEFAULT, 0, 0, read_policy_options, PGC_SUSET, 0},
	{"hybrid_index.flush_policy",
		"Flushing policy of efind indexes: m, mh, mha or mhao (Eq. 4-7).",
		"The paper's best value is mh (section 6.1).",
		HI_GUC_ENUM, &ef_guc_flush_policy, EF_FLUSH_POLICY_DEFAULT, 0, 0, flush_policy_options, PGC_SUSET, 0},
	{"hybrid_index.efind_flush_percent",
		"Percentage p of the oldest write buffer entries a flush considers.",
		"The paper's best value is 60 (section 6.1).",
		HI_GUC_INT, &ef_guc_flush_percent, EF_FLUSH_PERCENT_DEFAULT, 1, 100, NULL, PGC_SUSET, 0},
	{"hybrid_index.efind_flush_unit",
		"Pages per efind flushing unit (s).",
		"The paper's best value is 5 (section 5.1).",
		HI_GUC_INT, &ef_guc_flush_unit, EF_FLUSH_UNIT_DEFAULT, 1, EF_FLUSH_UNIT_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.efind_temporal_control",
		"Temporal control of efind indexes: none, reads, writes or both.",
		NULL,
		HI_GUC_ENUM, &ef_guc_temporal, EF_TEMPORAL_DEFAULT, 0, 0, temporal_options, PGC_SUSET, 0},
	{"hybrid_index.efind_seq_distance",
		"Largest page distance of an (almost) sequential write (Alg. 4).",
		NULL,
		HI_GUC_INT, &ef_guc_seq_distance, EF_SEQ_DISTANCE_DEFAULT, 0, EF_DISTANCE_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.efind_stride_distance",
		"Page distance beyond which a write counts as a stride write (Alg. 4).",
		NULL,
		HI_GUC_INT, &ef_guc_stride_distance, EF_STRIDE_DISTANCE_DEFAULT, 0, EF_DISTANCE_MAX, NULL, PGC_SUSET, 0},
	{"hybrid_index.efind_log_size",
		"Redo log size of an efind index that triggers its compaction (a checkpoint).",
		"The paper's best value is 10 MB (section 6.4).",
		HI_GUC_INT, &ef_guc_log_kb, EF_LOG_KB_DEFAULT, EF_LOG_KB_MIN, EF_LOG_KB_MAX, NULL, PGC_SUSET, GUC_UNIT_KB},
};

void
efind_define_gucs(void)
{
	hi_define_guc_table(efind_gucs, lengthof(efind_gucs));
}

/* A reloption's value if it was given (>= 0), else the setting's */
static int
pick(int relopt, int guc)
{
	return relopt >= 0 ? relopt : guc;
}

/*
 * The parameters of an index being built: its reloptions, and the
 * current settings for what they leave out.
 */
void
ef_config_resolve(Relation index, EfindConfig *cfg)
{
	/* no relation (the checkpoint at shutdown): the server's settings */
	EfindOptions *o = index ? (EfindOptions *) index->rd_options : NULL;

	memset(cfg, 0, sizeof(*cfg));
	cfg->magic = EF_CONFIG_MAGIC;
	cfg->version = EF_CONFIG_VERSION;
	cfg->buffer_kb = o && o->base.buffer_size > 0 ? o->base.buffer_size : ef_guc_buffer_kb;
	cfg->read_share = pick(o ? o->read_buffer_share : -1, ef_guc_read_share);
	cfg->read_policy = pick(o ? o->read_buffer_policy : -1, ef_guc_read_policy);
	cfg->flush_policy = pick(o ? o->flush_policy : -1, ef_guc_flush_policy);
	cfg->flush_percent = pick(o ? o->flush_percent : -1, ef_guc_flush_percent);
	cfg->flush_unit = pick(o ? o->flush_unit : -1, ef_guc_flush_unit);
	cfg->temporal = pick(o ? o->temporal_control : -1, ef_guc_temporal);
	cfg->seq_distance = pick(o ? o->seq_distance : -1, ef_guc_seq_distance);
	cfg->stride_distance = pick(o ? o->stride_distance : -1, ef_guc_stride_distance);
	cfg->log_kb = pick(o ? o->log_size : -1, ef_guc_log_kb);
}
