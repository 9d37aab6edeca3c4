/* atc main: being written (tools/atc.c). */
int main(void) { return 1; }
