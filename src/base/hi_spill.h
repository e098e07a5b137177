/*
 * hi_spill.h
 *	  Temporary storage of the bulk builds, bounded by a memory budget
 *	  (maintenance_work_mem): fixed-size records sorted by float8 keys
 *	  through tuplesort, and unsorted record lists that move to a BufFile
 *	  once they outgrow their array.  Both spill through PostgreSQL's own
 *	  temporary files, so they show in log_temp_files and
 *	  pg_stat_database.temp_bytes like any sort.
 */
#ifndef HI_SPILL_H
#define HI_SPILL_H

/* the largest record the sort carries (three int8 payload columns) */
#define HI_SPILL_REC_MAX	24

/* records sorted by one or two float8 keys; memory within budget bytes */
typedef struct HiSort HiSort;

extern HiSort *hi_sort_begin(Size recsize, int nkeys, Size budget);
extern void hi_sort_put(HiSort *s, const void *rec, double k1, double k2);
extern void hi_sort_done(HiSort *s);
extern bool hi_sort_get(HiSort *s, void *rec);
extern void hi_sort_end(HiSort *s);

/* records kept in order of arrival: an array, then a temporary file */
typedef struct HiSpillList HiSpillList;

extern HiSpillList *hi_list_begin(Size recsize, Size budget);
extern void hi_list_put(HiSpillList *l, const void *rec);
extern Size hi_list_count(const HiSpillList *l);
extern bool hi_list_full(const HiSpillList *l);
extern bool hi_list_spilled(const HiSpillList *l);
extern char *hi_list_array(HiSpillList *l);
extern void hi_list_rewind(HiSpillList *l);
extern bool hi_list_next(HiSpillList *l, void *rec);
extern void hi_list_end(HiSpillList *l);

#endif							/* HI_SPILL_H */
